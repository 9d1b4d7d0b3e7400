// The door for FOLDERS mkt writes into or trusts (config, credentials, journal, caches, update
// state, the sandbox's data folder, a project folder `mkt init` fills, an export target). It
// guarantees: the folder is this user's (or root's), never another user's; nobody else can write in
// it (tightened to 0700 with one warning, or refused where changing it is not ours to do); a link at
// its place is refused where the caller says so; a path that is not a folder is refused in words.
// Files inside are opened through ./fs-atomic.ts (no link followed, replaced atomically).
import { chmodSync, lstatSync, mkdirSync, realpathSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { RefusedError } from './refused.js';

/** How a private folder is named and what to suggest when it is refused. */
export interface PrivateFolder {
  /** "config folder", "journal folder": in messages. */
  label: string;
  /** The error code of a refusal. */
  code: string;
  hints: string[];
  /** False: a symbolic link at the folder's place is refused (it is followed otherwise). */
  follow?: boolean;
  /** False: a folder others can write is refused (a project folder), not tightened to 0700. */
  fix?: boolean;
}

/**
 * Checks `dir` as {@link checkPrivateFolder} does, at once (the sandbox and the update notice are
 * synchronous): answers the warning to give when it tightened the mode, throws a RefusedError when
 * the folder may not be used. Nothing to check while the folder does not exist.
 */
export function checkFolderSync(dir: string, folder: PrivateFolder): string | undefined {
  if (process.platform === 'win32') return undefined;
  let info;
  try {
    info = folder.follow === false ? lstatSync(dir) : statSync(dir);
  } catch {
    return undefined; // created later, 0700
  }
  const refuse = (why: string, hints = folder.hints) =>
    new RefusedError(folder.code, `The ${folder.label} ${dir} ${why}.`, hints);
  if (info.isSymbolicLink())
    throw refuse('is a symbolic link; mkt keeps it only in a real folder of yours, never through a link');
  if (!info.isDirectory()) throw refuse('is not a folder (a file is in its place)');
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid && info.uid !== 0)
    throw refuse(`belongs to another user (uid ${info.uid}); mkt writes and trusts only a folder of yours`);
  if ((info.mode & 0o022) === 0) return undefined;
  if (folder.fix === false)
    throw refuse(`is writable by others (mode ${(info.mode & 0o777).toString(8)})`, [
      `chmod go-w "${dir}"`,
      ...folder.hints,
    ]);
  try {
    chmodSync(dir, info.mode & 0o700);
  } catch (err) {
    throw refuse(`is writable by others and could not be fixed (${(err as Error).message})`, [
      `chmod 700 "${dir}"`,
    ]);
  }
  return `The ${folder.label} ${dir} was writable by others (mode ${(info.mode & 0o777).toString(8)}); made it 0700.`;
}

/**
 * Where mkt keeps secrets or what stands in for them (settings, credentials, the webhook journal):
 * a folder this user (or root) owns, refused otherwise; write access of others is taken away with
 * one warning (mode 0700 left). Whoever can write there could redirect the site URL, swap the
 * credential file, or plant deliveries and links. Nothing to check while the folder does not exist.
 */
export async function checkPrivateFolder(
  dir: string,
  folder: PrivateFolder,
  warn: (message: string) => void,
): Promise<void> {
  const warning = checkFolderSync(dir, folder);
  if (warning) warn(warning);
}

/** Makes `dir` (mode 0700) if it is missing, then checks it as {@link checkPrivateFolder}. */
export async function privateFolder(
  dir: string,
  folder: PrivateFolder,
  warn: (message: string) => void,
): Promise<void> {
  const warning = privateFolderSync(dir, folder);
  if (warning) warn(warning);
}

/**
 * Checks `dir` (before anything is made through a link or in another user's folder), makes it 0700
 * if missing, and checks it again; answers the warning to give, if any. Throws a RefusedError.
 */
export function privateFolderSync(dir: string, folder: PrivateFolder): string | undefined {
  const before = checkFolderSync(dir, folder);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return checkFolderSync(dir, folder) ?? before;
}

/**
 * Why `dir` could be changed by someone else, or undefined when it cannot: it and the folder above
 * it (mkt's own, `levels` of them) are this user's and writable by no one else; every folder above
 * them this user's or root's, writable by others only with the sticky bit (as /tmp). Made (0700)
 * when missing. The rule the code cache keeps (src/boot.ts, which runs before this module can load).
 */
export function folderChainProblem(dir: string, levels = 2): string | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined; // Windows: a user's profile folders are their own
  let at: string;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    at = realpathSync(dir);
  } catch (err) {
    return `${dir} cannot be made (${(err as NodeJS.ErrnoException).code})`;
  }
  for (let depth = 0; ; depth++) {
    const info = lstatSync(at);
    const own = depth < levels ? info.uid === uid : info.uid === uid || info.uid === 0;
    if (!own) return `${at} belongs to another user (uid ${info.uid})`;
    if (info.mode & 0o022 && (depth < levels || !(info.mode & 0o1000)))
      return `${at} is writable by others (mode ${(info.mode & 0o7777).toString(8)})`;
    if (at === dirname(at)) return undefined;
    at = dirname(at);
  }
}
