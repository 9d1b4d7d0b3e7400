import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Files this process has written: a part of each temporary name. */
let written = 0;

/** Writes a file so that readers see the old or the new content, never a torn one (tmp + fsync + rename). */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: { mode?: number; dirMode?: number } = {},
): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: options.dirMode ?? 0o700 });
  // A name of this process's own, created afresh (O_EXCL: never an existing file, never through a
  // link): no random bytes, whose node:crypto is a visible part of a start (BENCHMARKS.md).
  const tmp = `${path}.${process.pid}.${Date.now()}.${++written}.tmp`;
  const handle = await open(tmp, 'wx', options.mode ?? 0o600);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
