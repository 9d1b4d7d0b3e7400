import { join } from 'node:path';
import { readOwnFileSync, removeSync, writeFileAtomic } from '../platform/fs-atomic.js';
import { isSameProcess, markOf, type ProcessMark } from '../platform/processes.js';
import type { SandboxSeed } from '../sandbox/start-sandbox.js';

/** What a running sandbox leaves in its data folder (0600): how to find, reach and stop it. */
export interface RunningSandbox {
  pid: number;
  port: number;
  site_url: string;
  data_dir: string;
  started_at: string;
  /** When its process started (clock ticks, /proc/PID/stat): proves that a pid is still this sandbox. */
  process_start?: string;
  seed: SandboxSeed;
}

/** The file in the data folder; written once the sandbox answers, removed when it stops. */
export const RUNNING_FILE = 'running.json';

/** Writes the running file of this process (`info.pid`), with the mark that proves it later. */
export const writeRunning = (info: RunningSandbox): Promise<void> =>
  writeFileAtomic(
    join(info.data_dir, RUNNING_FILE),
    `${JSON.stringify({ ...info, process_start: markOf(info.pid).start }, null, 2)}\n`,
    { mode: 0o600 },
  );

/** The process a running file names, as the processes door checks it. */
export const markOfRunning = (info: RunningSandbox): ProcessMark => ({
  pid: info.pid,
  start: info.process_start,
});

/** The folder's running file, or undefined when there is none (or it is not one of ours). */
export async function readRunning(dataDir: string): Promise<RunningSandbox | undefined> {
  try {
    // Never through a link, never another user's file (the files door).
    const text = readOwnFileSync(join(dataDir, RUNNING_FILE), {
      maxBytes: 1 << 20,
      code: 'running_file_unsafe',
    });
    if (text === undefined) return undefined;
    const info = JSON.parse(text) as Partial<RunningSandbox>;
    if (typeof info.pid !== 'number' || typeof info.site_url !== 'string' || !info.seed) return undefined;
    return info as RunningSandbox;
  } catch {
    return undefined;
  }
}

/** Removes the running file, but only the one `pid` wrote (a newer sandbox's stays). */
export async function removeRunning(dataDir: string, pid: number): Promise<void> {
  const info = await readRunning(dataDir);
  if (info?.pid === pid) removeSync(join(dataDir, RUNNING_FILE));
}

/** True while the sandbox's process is alive and provably the one that wrote the file (processes door). */
export const alive = (info: RunningSandbox): boolean => isSameProcess(markOfRunning(info));

/** True when the sandbox at `siteUrl` answers (its OAuth metadata), within `timeoutMs`. */
export async function answers(siteUrl: string, timeoutMs = 2000): Promise<boolean> {
  try {
    const res = await fetch(`${siteUrl}/.well-known/oauth-authorization-server`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * The sandbox running on `dataDir`, checked: its process exists and its address answers. A file
 * left by a sandbox that died (kill -9, a crash) is removed, and the answer is undefined.
 */
export async function findRunning(dataDir: string): Promise<RunningSandbox | undefined> {
  const info = await readRunning(dataDir);
  if (!info) return undefined;
  if (alive(info) && (await answers(info.site_url))) return info;
  if (!alive(info)) await removeRunning(dataDir, info.pid);
  return undefined;
}
