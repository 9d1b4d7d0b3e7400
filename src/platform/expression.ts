// The door for WORK THAT RUNS THE USER'S EXPRESSION (--jq). jq (WebAssembly) runs on the main thread,
// synchronously, with every SIGINT and SIGTERM handler taken off while it runs: a JavaScript handler
// would wait for jq to return, but with none the signal's default action ends the process at once,
// however long the expression would run (a shell sees 130 or 143, as after mkt's own handlers); they
// are put back when it returns. Its memory is bounded: jq's heap (WebAssembly memory grows only
// through emscripten_resize_heap, refused here past the bound; jq-wasm itself stops at 256 MB) and
// what it prints in one run (counted at fd_write). Past either, the run is stopped and refused in
// plain words, never an "Aborted()" shown as a bug; the instance is not used again. Loaded only with --jq.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { RefusedError } from './refused.js';
import { resolveCommonJs } from './commonjs.js';

/** The memory (MiB) a running expression may take: MKT_JQ_MEMORY_MB, else 1024. */
export function expressionMemoryMb(env: Record<string, string | undefined>): number {
  const n = Number(env.MKT_JQ_MEMORY_MB);
  return Number.isFinite(n) && n >= 64 ? n : 1024;
}

/** jq-wasm's own ceiling of its heap (its getHeapMax), MiB. */
const JQ_HEAP_MAX_MB = 256;

export interface JqResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

interface JqHandle {
  raw(input: string, query: string, flags: string[]): JqResult;
}
// WebAssembly, as this module uses it (the project's TypeScript libraries do not declare it).
interface WasmInstance {
  readonly exports: Record<string, unknown>;
}
const wasm = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => WasmInstance;
  Memory: new (descriptor: { initial: number }) => { readonly buffer: ArrayBuffer };
}
type Imports = { a: Record<string, (...args: number[]) => unknown> };
type Hook = (imports: Imports, done: (instance: WasmInstance, module: object) => void) => void;

/** Runs `fn` with SIGINT and SIGTERM at their default action (the process ends at once), then puts mkt's handlers back. */
function withDefaultSignals<T>(fn: () => T): T {
  const saved = (['SIGINT', 'SIGTERM'] as const).map((name) => [name, process.listeners(name)] as const);
  for (const [name] of saved) process.removeAllListeners(name);
  try {
    return fn();
  } finally {
    for (const [name, listeners] of saved) for (const listener of listeners) process.on(name, listener);
  }
}

/** The import named `name` (jq-wasm minifies the keys, not the functions' names). */
function importNamed(imports: Imports, name: string): string {
  const key = Object.keys(imports.a).find((k) => imports.a[k]?.name === name);
  if (key === undefined) throw new Error(`jq-wasm has no ${name} import`);
  return key;
}

/**
 * jq, loaded (WebAssembly compiled by Liftoff only: a run is a few milliseconds, and TurboFan's
 * recompiling on every core held up the command's own request), each `run` bounded as above.
 * `what` names the expression in messages.
 */
export async function loadJq(limit: { what: string; memoryMb: number }): Promise<{
  run(input: string, expression: string): JqResult;
}> {
  process.getBuiltinModule('node:v8').setFlagsFromString('--liftoff-only');
  // V8's flags no longer those the code cache was made under: src/boot.ts then writes none at exit.
  (globalThis as Record<symbol, unknown>)[Symbol.for('mkt.v8-flags-changed')] = true;
  const entry = resolveCommonJs('jq-wasm');
  const heapMb = Math.min(limit.memoryMb, JQ_HEAP_MAX_MB);
  const outputBytes = Math.floor(limit.memoryMb / 4) * 1024 * 1024;
  let memory: { readonly buffer: ArrayBuffer } | undefined;
  let written = 0;
  let stop: Error | undefined;
  const refuse = (err: Error) => {
    stop ??= err;
    throw stop;
  };
  const instantiateWasm: Hook = (imports, done) => {
    const resize = importNamed(imports, '_emscripten_resize_heap');
    const grow = imports.a[resize]!;
    imports.a[resize] = (size: number) => {
      if (size >>> 0 > heapMb * 1024 * 1024) return refuse(memoryError(limit.what, heapMb));
      return grow(size);
    };
    const write = importNamed(imports, '_fd_write');
    const fdWrite = imports.a[write]!;
    imports.a[write] = (fd: number, iov: number, count: number, pnum: number) => {
      const answer = fdWrite(fd, iov, count, pnum);
      written += new Uint32Array(memory!.buffer, pnum, 1)[0]!;
      if (written > outputBytes) refuse(outputError(limit.what, outputBytes));
      return answer;
    };
    // Compiled and instantiated at once: a failure throws into jq-wasm's loading, which rejects.
    const module = new wasm.Module(readFileSync(join(dirname(entry), 'build', 'jq.wasm')));
    const instance = new wasm.Instance(module, imports);
    memory = Object.values(instance.exports).find((e) => e instanceof wasm.Memory) as typeof memory;
    done(instance, module);
  };
  const jq = await (
    process.getBuiltinModule('node:module').createRequire(import.meta.url)(entry) as {
      loadJq(options: { instantiateWasm: Hook }): Promise<JqHandle>;
    }
  ).loadJq({ instantiateWasm });
  return {
    run(input, expression) {
      if (stop) throw stop;
      written = 0;
      try {
        return withDefaultSignals(() => jq.raw(input, expression, ['-c']));
      } catch (err) {
        // jq aborts when its allocation fails (our refusal, or its own ceiling).
        if (stop) throw stop;
        if (/Aborted|out of memory|memory/i.test(String((err as Error)?.message ?? err)))
          refuse(memoryError(limit.what, heapMb));
        throw new RefusedError(
          'expression_failed',
          `${limit.what} failed: ${String((err as Error)?.message ?? err)}.`,
        );
      }
    },
  };
}

function memoryError(what: string, mb: number): Error {
  return new RefusedError(
    'expression_out_of_memory',
    `${what} needed more than ${mb} MB of memory; mkt stopped it.`,
    [
      mb < JQ_HEAP_MAX_MB
        ? 'Narrow the expression (select first, then collect), or set MKT_JQ_MEMORY_MB to allow more.'
        : 'Narrow the expression (select first, then collect).',
    ],
  );
}

function outputError(what: string, bytes: number): Error {
  return new RefusedError(
    'expression_out_of_memory',
    `${what} printed more than ${bytes / 1024 / 1024} MB; mkt stopped it.`,
    ['Narrow the expression, or set MKT_JQ_MEMORY_MB to allow more (a quarter of it may be printed).'],
  );
}
