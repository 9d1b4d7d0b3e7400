import { closeSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { MktError } from '../errors.js';
import { openAppendSync, readOwnFileSync } from '../platform/fs-atomic.js';
import { privateFolderSync } from '../platform/private-folder.js';
import { signalProcess, spawnDetached } from '../platform/processes.js';
import { sandboxEnv } from './env.js';
import { answers, findRunning, readRunning } from './running.js';

/** The sandbox's data folder, by the folder door: the same rule as the sandbox's own (claimFolder). */
const SANDBOX_FOLDER = {
  label: 'sandbox data folder',
  code: 'data_folder_unsafe',
  hints: ['mkt sandbox start --data-dir ~/.local/share/mkt/sandbox   (a folder of yours)'],
};

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
  // The folder door (another user's folder refused, as the sandbox itself refuses it), then the log
  // never through a link planted at its name, never another user's file.
  privateFolderSync(input.folder, SANDBOX_FOLDER);
  const logPath = join(input.folder, DETACHED_LOG);
  const log = openAppendSync(logPath, 'data_folder_unsafe');
  const { process: child, mark } = spawnDetached(
    process.execPath,
    [input.bin, 'sandbox', 'start', ...input.argv],
    {
      stdio: ['ignore', 'ignore', log],
      env: process.env,
    },
  );
  closeSync(log);
  let exited: number | null | undefined;
  child.once('exit', (code, signal) => (exited = code ?? (signal ? 1 : 0)));
  child.once('error', () => (exited = 1));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exited !== undefined) {
      let text = '';
      try {
        text = readOwnFileSync(logPath, { maxBytes: 1 << 24, code: 'data_folder_unsafe' }) ?? '';
      } catch {
        // a log too large to read whole: the message names it
      }
      const tail = text.trimEnd().split('\n').slice(-3).join(' ');
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
      signalProcess(mark, 'SIGTERM');
      throw new MktError(
        'sandbox_start_timeout',
        `The sandbox did not answer within 30 s (log: ${logPath}).`,
        1,
      );
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}
