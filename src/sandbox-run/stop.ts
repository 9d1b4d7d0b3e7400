import { readFileSync } from 'node:fs';
import { MktError } from '../errors.js';
import { alive, findRunning, readRunning, removeRunning } from './running.js';

/** True when `pid` is (as far as this system can tell) an mkt sandbox: on Linux its command line says so. */
function looksLikeSandbox(pid: number): boolean {
  try {
    return /sandbox/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  } catch {
    return process.platform !== 'linux';
  }
}

/** Stops the sandbox running on `dataDir` (SIGTERM, then waits); nothing running is not an error. */
export async function stopRunning(
  dataDir: string,
  timeoutMs: number,
): Promise<{ stopped: boolean; pid: number | null }> {
  const info = (await findRunning(dataDir)) ?? (await readRunning(dataDir));
  if (!info || !alive(info.pid) || !looksLikeSandbox(info.pid)) {
    if (info) await removeRunning(dataDir, info.pid);
    return { stopped: false, pid: null };
  }
  process.kill(info.pid, 'SIGTERM');
  const deadline = Date.now() + timeoutMs;
  while (alive(info.pid)) {
    if (Date.now() > deadline)
      throw new MktError(
        'stop_timeout',
        `The sandbox (process ${info.pid}) did not stop within ${timeoutMs / 1000} s.`,
        1,
        {
          hints: [`kill -9 ${info.pid}`],
        },
      );
    await new Promise((r) => setTimeout(r, 50));
  }
  await removeRunning(dataDir, info.pid);
  return { stopped: true, pid: info.pid };
}
