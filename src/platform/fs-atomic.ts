// The door for FILES mkt writes or trusts; the folder they are in is checked by ./private-folder.ts.
// It guarantees: no symbolic link at a file's name is ever followed (O_NOFOLLOW, or O_CREAT|O_EXCL
// on a fresh name); a file mkt reads as its own state is a regular file of this user (or root),
// no larger than the caller's bound; a file is replaced atomically (readers see the old or the new
// content, never a torn one); an appended file is a regular file of this user with one name (no
// hard link to somewhere else). Every refusal is a RefusedError naming the file. No module outside
// src/platform writes, appends, renames or removes a file any other way (eslint.config.js).
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { RefusedError } from './refused.js';

/** Opening never follows a symbolic link planted at the name (ELOOP instead); 0 where there is none. */
export const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/** Files this process has written: a part of each temporary name. */
let written = 0;

const linkRefusal = (path: string, code: string) =>
  new RefusedError(code, `${path} is a symbolic link; mkt never reads or writes its files through a link.`, [
    `rm "${path}"   (after looking at what it points to)`,
  ]);

/** Refuses what an opened file must not be: not a regular file, another user's, or (to write) a hard link. */
function checkOpened(path: string, info: Stats, code: string, write: boolean): void {
  if (!info.isFile()) throw new RefusedError(code, `${path} is not a regular file.`);
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid && info.uid !== 0)
    throw new RefusedError(
      code,
      `${path} belongs to another user (uid ${info.uid}); mkt uses only files of yours.`,
      [`rm "${path}"   (after looking at it)`],
    );
  if (write && info.nlink > 1)
    throw new RefusedError(
      code,
      `${path} has other names (a hard link); mkt writes only a file of its own.`,
      [`rm "${path}"`],
    );
}

function openChecked(path: string, flags: number, mode: number, code: string, write: boolean): number {
  let fd: number;
  try {
    fd = openSync(path, flags | NOFOLLOW, mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw linkRefusal(path, code);
    throw err;
  }
  try {
    checkOpened(path, fstatSync(fd), code, write);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
}

/**
 * The text of a file mkt keeps (state, a cache): undefined when there is none; a link, another
 * user's file or one over `maxBytes` is a RefusedError with `code`.
 */
export function readOwnFileSync(
  path: string,
  options: { maxBytes: number; code: string },
): string | undefined {
  let fd: number;
  try {
    fd = openChecked(path, constants.O_RDONLY, 0, options.code, false);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const size = fstatSync(fd).size;
    if (size > options.maxBytes)
      throw new RefusedError(
        options.code,
        `${path} is larger than ${options.maxBytes} bytes (${size}); mkt does not read it.`,
      );
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * Opens `path` to append (made 0600 when missing), never through a link, refused when it is not a
 * regular file of this user with one name; answers the descriptor (for a child's stderr, a log).
 */
export function openAppendSync(path: string, code: string): number {
  return openChecked(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600, code, true);
}

/** Appends `text` to `path` as {@link openAppendSync} opens it. */
export function appendFileChecked(path: string, text: string, code: string): void {
  const fd = openAppendSync(path, code);
  try {
    writeFileSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** Opens (or makes, 0600) a file to lock or read-write it in place (a SQLite lock file), never through a link. */
export function openOwnFileSync(path: string, code: string): number {
  return openChecked(path, constants.O_RDWR | constants.O_CREAT, 0o600, code, true);
}

/** A fresh name beside `path` for this process's next temporary file. */
const tempName = (path: string) => `${path}.${process.pid}.${Date.now()}.${++written}.tmp`;

/** Writes a file so that readers see the old or the new content, never a torn one (tmp + fsync + rename). */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: { mode?: number; dirMode?: number } = {},
): Promise<void> {
  const { mkdir, open, rename, rm } = await import('node:fs/promises');
  await mkdir(dirname(path), { recursive: true, mode: options.dirMode ?? 0o700 });
  // A name of this process's own, created afresh (O_EXCL: never an existing file, never through a
  // link): no random bytes, whose node:crypto is a visible part of a start (BENCHMARKS.md).
  const tmp = tempName(path);
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

/** {@link writeFileAtomic}, at once (the update notice writes after a command, synchronously). */
export function writeFileAtomicSync(
  path: string,
  data: string | Uint8Array,
  options: { mode?: number } = {},
): void {
  const tmp = tempName(path);
  const fd = openSync(tmp, 'wx', options.mode ?? 0o600);
  try {
    writeFileSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * Makes a new file at `path` with `data` (O_EXCL: never over an existing file, never through a
 * link). An existing one is a RefusedError with `code` naming it, before anything is written.
 */
export async function createFile(
  path: string,
  data: string,
  options: { mode?: number; code: string },
): Promise<void> {
  const { open } = await import('node:fs/promises');
  let handle;
  try {
    handle = await open(
      path,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW,
      options.mode ?? 0o644,
    );
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ELOOP')
      throw new RefusedError(options.code, `${path} already exists; mkt does not write over it.`, [
        `mv "${path}" "${path}.old"`,
      ]);
    throw err;
  }
  try {
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
}

/** Makes the folder `path` and those above it that are missing (0700 unless `mode`); the caller checks it. */
export function makeFolderSync(path: string, mode = 0o700): void {
  mkdirSync(path, { recursive: true, mode });
}

/** Removes `path` (a file, or with `recursive` a folder and what is in it); a missing one is fine. */
export function removeSync(path: string, options: { recursive?: boolean } = {}): void {
  rmSync(path, { force: true, recursive: options.recursive ?? false });
}

/** Renames `from` to `to` (one file system: atomic); `to` is replaced, never followed when a link. */
export function renameSyncChecked(from: string, to: string): void {
  renameSync(from, to);
}

/** A new private (0700) folder under the system's temporary folder, named `prefix` and random letters. */
export function makeTempFolderSync(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Opens `path` with `flags` (a read, or a journal's append), never through a link: a link is a RefusedError with `code`. */
export function openNoFollowSync(path: string, flags: number, code: string, mode = 0o600): number {
  try {
    return openSync(path, flags | NOFOLLOW, mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw linkRefusal(path, code);
    throw err;
  }
}

/** {@link openNoFollowSync} as a FileHandle; the error of a link left as ELOOP for callers that name it themselves. */
export async function openNoFollow(
  path: string,
  flags: number,
  mode = 0o600,
): Promise<import('node:fs/promises').FileHandle> {
  const { open } = await import('node:fs/promises');
  return open(path, flags | NOFOLLOW, mode);
}
