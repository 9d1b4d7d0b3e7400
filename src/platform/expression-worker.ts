// The door for WORK THAT RUNS THE USER'S EXPRESSION (--jq): it runs in a worker thread, so that the
// main thread stays free to take Ctrl-C and SIGTERM (base-command.ts ends the process at once, the
// worker with it: within a second however long the expression would run), and it is bounded in
// memory (the worker's heap by resourceLimits; the whole process's, WebAssembly memory included,
// by a watch on its resident size): past the bound the worker is ended and the call refused in
// plain words, never an "Aborted()" shown as a bug. Loaded only when --jq is given.
import type { Worker } from 'node:worker_threads';
import { RefusedError } from './refused.js';

/** The memory (MiB, resident, the whole process) a running expression may take: MKT_JQ_MEMORY_MB, else 1024. */
export function expressionMemoryMb(env: Record<string, string | undefined>): number {
  const n = Number(env.MKT_JQ_MEMORY_MB);
  return Number.isFinite(n) && n >= 64 ? n : 1024;
}

/** How often a running call's memory is looked at (ms). */
const WATCH_MS = 25;

/** A worker thread running `code` (CommonJS text: it answers each message {id, ...} with {id, ...}). */
export class ExpressionWorker {
  private readonly worker: Worker;
  private next = 0;
  private readonly calls = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private failed: Error | undefined;

  constructor(
    code: string,
    workerData: unknown,
    private readonly limit: { what: string; memoryMb: number },
  ) {
    const { Worker } = process.getBuiltinModule('node:worker_threads');
    this.worker = new Worker(code, {
      eval: true,
      workerData,
      resourceLimits: { maxOldGenerationSizeMb: Math.max(64, Math.floor(limit.memoryMb / 2)) },
      stdout: true,
      stderr: true,
    });
    // It keeps nothing alive: mkt ends when its command is done, the worker with it.
    this.worker.unref();
    this.worker.on('message', (m: { id: number; error?: string }) => {
      const call = this.calls.get(m.id);
      if (!call) return;
      this.calls.delete(m.id);
      if (m.error !== undefined) call.reject(this.plain(m.error));
      else call.resolve(m);
    });
    this.worker.on('error', (err) => this.fail(this.plain(String(err.message ?? err))));
    this.worker.on('exit', () => this.fail(this.failed ?? this.plain('the worker stopped')));
  }

  /** What a failure of the worker means in words: out of memory is said plainly. */
  private plain(message: string): Error {
    if (
      /Aborted|out of memory|ERR_WORKER_OUT_OF_MEMORY|Array buffer allocation|Invalid array length|memory/i.test(
        message,
      )
    )
      return this.memoryError();
    return new RefusedError('expression_failed', `${this.limit.what} failed: ${message}.`);
  }

  private memoryError(): Error {
    return new RefusedError(
      'expression_out_of_memory',
      `${this.limit.what} needed more than ${this.limit.memoryMb} MB of memory; mkt stopped it.`,
      ['Narrow the expression (select first, then collect), or set MKT_JQ_MEMORY_MB to allow more.'],
    );
  }

  private fail(err: Error): void {
    this.failed ??= err;
    for (const call of this.calls.values()) call.reject(this.failed);
    this.calls.clear();
  }

  /** Sends `message` and answers the worker's reply; refused when it fails or outgrows the memory bound. */
  call<T>(message: Record<string, unknown>): Promise<T> {
    if (this.failed) return Promise.reject(this.failed);
    const id = ++this.next;
    const answer = new Promise<T>((resolve, reject) => {
      this.calls.set(id, { resolve: resolve as (v: unknown) => void, reject });
    });
    this.worker.ref();
    const bound = this.limit.memoryMb * 1024 * 1024;
    const watch = setInterval(() => {
      if (process.memoryUsage.rss() <= bound) return;
      this.fail(this.memoryError());
      void this.worker.terminate();
    }, WATCH_MS);
    this.worker.postMessage({ ...message, id });
    const done = () => {
      clearInterval(watch);
      if (this.calls.size === 0) this.worker.unref();
    };
    answer.then(done, done);
    return answer;
  }
}
