import { MktError } from '../errors.js';
import { pidAlive, signalProcess } from '../platform/processes.js';
import { alive, findRunning, markOfRunning, readRunning, removeRunning } from './running.js';

/**
 * Stops the sandbox running on `dataDir` (SIGTERM, then waits); nothing running is not an error. The
 * pid of its running file is signalled only when it is provably that sandbox (its start time, by the
 * processes door): a stale file whose pid now belongs to another process is removed, nothing signalled.
 */
export async function stopRunning(
  dataDir: string,
  timeoutMs: number,
): Promise<{ stopped: boolean; pid: number | null }> {
  const info = (await findRunning(dataDir)) ?? (await readRunning(dataDir));
  if (!info || !alive(info) || !signalProcess(markOfRunning(info), 'SIGTERM')) {
    if (info) await removeRunning(dataDir, info.pid);
    return { stopped: false, pid: null };
  }
  const deadline = Date.now() + timeoutMs;
  while (pidAlive(info.pid)) {
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
