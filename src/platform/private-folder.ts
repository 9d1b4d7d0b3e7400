import { lstatSync, statSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import { MktError } from '../errors.js';

/** How a private folder is named and what to suggest when it is refused. */
export interface PrivateFolder {
  /** "config folder", "journal folder": in messages. */
  label: string;
  /** The error code of a refusal. */
  code: string;
  hints: string[];
  /** False: a symbolic link at the folder's place is refused (it is followed otherwise). */
  follow?: boolean;
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
  if (process.platform === 'win32') return;
  let info;
  try {
    // At once: a start checks a folder or two, and node:fs/promises costs ~1.8 ms to load.
    info = folder.follow === false ? lstatSync(dir) : statSync(dir);
  } catch {
    return; // created later, 0700
  }
  const refuse = (why: string, hints = folder.hints) =>
    new MktError(folder.code, `The ${folder.label} ${dir} ${why}.`, 1, { hints });
  if (info.isSymbolicLink())
    throw refuse('is a symbolic link; mkt keeps it only in a real folder of yours, never through a link');
  if (!info.isDirectory()) throw refuse('is not a folder');
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid && info.uid !== 0)
    throw refuse(
      `belongs to another user (uid ${info.uid}); mkt keeps secrets and settings only in a folder of yours`,
    );
  if ((info.mode & 0o022) === 0) return;
  try {
    await chmod(dir, info.mode & 0o700);
  } catch (err) {
    throw refuse(`is writable by others and could not be fixed (${(err as Error).message})`, [
      `chmod 700 "${dir}"`,
    ]);
  }
  warn(
    `The ${folder.label} ${dir} was writable by others (mode ${(info.mode & 0o777).toString(8)}); made it 0700.`,
  );
}

/** Makes `dir` (mode 0700) if it is missing, then checks it as {@link checkPrivateFolder}. */
export async function privateFolder(
  dir: string,
  folder: PrivateFolder,
  warn: (message: string) => void,
): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await checkPrivateFolder(dir, folder, warn);
}
