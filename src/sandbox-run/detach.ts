import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, closeSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MktError } from '../errors.js';
import { sandboxEnv } from './env.js';
import { answers, findRunning, readRunning } from './running.js';

/** The sandbox's log file in its data folder, when it runs detached. */
export const DETACHED_LOG = 'sandbox.log';

/** A fixtures file seeds an empty folder only: one with state needs --reset, so nothing is lost by mistake. */
export function refuseSeedOnState(folder: string): void {
  if (existsSync(join(folder, 'sandbox.sqlite'))) {
    throw new MktError(
      'folder_has_state',
      `The data folder ${folder} already holds a sandbox's state; --seed replaces it only with --reset.`,
      1,
      { hints: [`mkt sandbox export --data-dir ${folder} --output backup.json`] },
    );
  }
}

/**
 * Starts `mkt sandbox start` (same flags) as a background process with its log in the data folder,
 * and answers once its running file is written and its address answers: the sandbox's address, process,
 * seed and environment. A start that fails says why (the end of its log) with its exit code.
 */
export async function detach(input: { bin: string; folder: string; argv: string[] }) {
  const running = await findRunning(input.folder);
  if (running) {
    throw new MktError(
      'sandbox_running',
      `A sandbox is already running on ${input.folder} at ${running.site_url} (process ${running.pid}).`,
      1,
      {
        hints: [`mkt sandbox stop --data-dir ${input.folder}`, `mkt sandbox env --data-dir ${input.folder}`],
      },
    );
  }
  mkdirSync(input.folder, { recursive: true, mode: 0o700 });
  const logPath = join(input.folder, DETACHED_LOG);
  const log = openSync(logPath, 'a', 0o600);
  const child = spawn(process.execPath, [input.bin, 'sandbox', 'start', ...input.argv], {
    detached: true,
    stdio: ['ignore', 'ignore', log],
    env: process.env,
  });
  closeSync(log);
  let exited: number | null | undefined;
  child.once('exit', (code, signal) => (exited = code ?? (signal ? 1 : 0)));
  child.once('error', () => (exited = 1));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exited !== undefined) {
      const tail = readFileSync(logPath, 'utf8').trimEnd().split('\n').slice(-3).join(' ');
      throw new MktError(
        'sandbox_start_failed',
        `The sandbox did not start: ${tail || 'no output'} (log: ${logPath}).`,
        exited || 1,
      );
    }
    const info = await readRunning(input.folder);
    if (info !== undefined && info.pid === child.pid && (await answers(info.site_url))) {
      child.unref();
      return { ...info, env: sandboxEnv(info), log_file: logPath };
    }
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw new MktError(
        'sandbox_start_timeout',
        `The sandbox did not answer within 30 s (log: ${logPath}).`,
        1,
      );
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}
