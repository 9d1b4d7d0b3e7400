import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, open, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { dataDir } from './paths.js';

type Env = Record<string, string | undefined>;

/** Launch files older than this are removed (a console link lives 5 minutes). */
const STALE_MS = 10 * 60_000;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/**
 * A one-time link handed to the browser without putting it in another process's argv or environment
 * (where every local user can read it): as Jupyter does, the link goes into an HTML file readable by
 * this user only (0600, in a 0700 folder of mkt's data folder) that sends the browser on to it, and
 * the browser is given the file's address. Answers that `file:` URL; older launch files are removed.
 */
export async function writeLauncher(
  env: Env,
  link: string,
  title: string,
): Promise<{ file: string; url: string }> {
  const folder = join(dataDir(env), 'launch');
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const info = await lstat(folder);
  const uid = process.getuid?.();
  if (!info.isDirectory() || (uid !== undefined && info.uid !== uid)) {
    throw new Error(`${folder} must be a folder of your own (not a link, not another user's).`);
  }
  if ((info.mode & 0o077) !== 0) await chmod(folder, 0o700);
  await removeStale(folder);
  const file = join(folder, `link-${randomBytes(12).toString('hex')}.html`);
  const href = escapeHtml(link);
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url=${href}"><title>${escapeHtml(title)}</title></head>
<body><p><a href="${href}">${escapeHtml(title)}</a></p></body></html>
`;
  // O_EXCL: never write through a file (or a link) someone put there.
  const handle = await open(file, 'wx', 0o600);
  try {
    await handle.writeFile(html);
  } finally {
    await handle.close();
  }
  return { file, url: pathToFileURL(file).href };
}

/**
 * Opens a link that is a capability through a launch file (see {@link writeLauncher}) with the
 * person's browser opener; answers the file's path, for the person to open by hand if the browser
 * did not come up. Throws when no file could be written or the opener could not start.
 */
export async function openPrivately(
  deps: { env: Env; openBrowser(url: string): Promise<void> },
  link: string,
  title: string,
): Promise<string> {
  const launcher = await writeLauncher(deps.env, link, title);
  await deps.openBrowser(launcher.url);
  return launcher.file;
}

async function removeStale(folder: string): Promise<void> {
  const now = Date.now();
  for (const name of await readdir(folder).catch(() => [])) {
    if (!/^link-[0-9a-f]+\.html$/.test(name)) continue;
    const path = join(folder, name);
    const info = await lstat(path).catch(() => undefined);
    if (info && now - info.mtimeMs > STALE_MS) await rm(path, { force: true });
  }
}
