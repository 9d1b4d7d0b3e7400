import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Writes a file so that readers see the old or the new content, never a torn one (tmp + fsync + rename). */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: { mode?: number; dirMode?: number } = {},
): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: options.dirMode ?? 0o700 });
  // Imported here, not at the top: loading node:crypto is a visible part of every start (BENCHMARKS.md).
  const { randomBytes } = await import('node:crypto');
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await open(tmp, 'w', options.mode ?? 0o600);
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
