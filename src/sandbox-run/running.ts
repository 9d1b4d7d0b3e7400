import { readFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../platform/fs-atomic.js';
import type { SandboxSeed } from '../sandbox/start-sandbox.js';

/** What a running sandbox leaves in its data folder (0600): how to find, reach and stop it. */
export interface RunningSandbox {
  pid: number;
  port: number;
  site_url: string;
  data_dir: string;
  started_at: string;
  seed: SandboxSeed;
}

/** The file in the data folder; written once the sandbox answers, removed when it stops. */
export const RUNNING_FILE = 'running.json';

export const writeRunning = (info: RunningSandbox): Promise<void> =>
  writeFileAtomic(join(info.data_dir, RUNNING_FILE), `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });

/** The folder's running file, or undefined when there is none (or it is not one of ours). */
export async function readRunning(dataDir: string): Promise<RunningSandbox | undefined> {
  try {
    const info = JSON.parse(await readFile(join(dataDir, RUNNING_FILE), 'utf8')) as Partial<RunningSandbox>;
    if (typeof info.pid !== 'number' || typeof info.site_url !== 'string' || !info.seed) return undefined;
    return info as RunningSandbox;
  } catch {
    return undefined;
  }
}

/** Removes the running file, but only the one `pid` wrote (a newer sandbox's stays). */
export async function removeRunning(dataDir: string, pid: number): Promise<void> {
  const info = await readRunning(dataDir);
  if (info?.pid === pid) await rm(join(dataDir, RUNNING_FILE), { force: true });
}

/** True while process `pid` exists and has not exited (a zombie waiting for its parent to reap it has). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // Linux: the state after the command's name; `Z` is exited, not yet reaped.
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

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
  if (alive(info.pid) && (await answers(info.site_url))) return info;
  if (!alive(info.pid)) await removeRunning(dataDir, info.pid);
  return undefined;
}
