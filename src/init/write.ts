// Writing the project `mkt init` makes: into a new folder it creates, or an empty one of this user's
// that nobody else can write (so nothing can be planted in it while it is written: a `src` link, a
// `.env`); every file is created new (never over one, never through a link); every value of .env is
// checked before anything is written (src/platform/file-values.ts).
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { createFile, makeFolderSync, removeSync } from '../platform/fs-atomic.js';
import { envFileText } from '../platform/file-values.js';
import { checkFolderSync } from '../platform/private-folder.js';
import { PROJECT_FILE, type ProjectFile } from './project.js';

export const FIXTURES_FILE = 'mkt.fixtures.json';

/** Refuses a project folder that is a link, another user's, or writable by others. */
export function checkProjectFolder(dir: string): void {
  checkFolderSync(dir, {
    label: 'project folder',
    code: 'unsafe_project_folder',
    hints: ['mkt init NEW-FOLDER --name NAME --template node'],
    follow: false,
    fix: false,
  });
}

/** The folder the templates ship in: beside dist/ (the bundle) or two above build/init/ (tsc's output). */
function templatesRoot(): string {
  for (const up of ['../templates/', '../../templates/']) {
    const url = new URL(up, import.meta.url);
    if (existsSync(url)) return url.pathname;
  }
  throw new Error('mkt init: the templates folder is missing from this installation.');
}

const packageName = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '') || 'marketplace-app';

/**
 * Copies the template with its placeholders filled, then mkt.json, the fixtures file and .env (0600);
 * on a failure, removes what it wrote (and the folder, when it made it). Answers the files written.
 */
export async function writeProject(
  input: { dir: string; name: string; template: string },
  content: { env: Record<string, string>; project: ProjectFile; fixtures: unknown },
): Promise<string[]> {
  const envText = `# Written by mkt init: this app's secrets. Git-ignored; never commit it.\n${envFileText(content.env)}`;
  const from = join(templatesRoot(), input.template);
  const values: Record<string, string> = { name: input.name, package: packageName(input.name) };
  const files: Array<[string, string, number]> = [];
  for (const entry of await readdir(from, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const source = join(entry.parentPath, entry.name);
    // npm drops files named .gitignore from packages: the template keeps it as `gitignore`.
    const rel = relative(from, source).replace(/(^|\/)gitignore$/, '$1.gitignore');
    const text = (await readFile(source, 'utf8')).replace(
      /\{\{(name|package)\}\}/g,
      (_, k: string) => values[k]!,
    );
    files.push([rel, text, 0o644]);
  }
  files.push([PROJECT_FILE, `${JSON.stringify(content.project, null, 2)}\n`, 0o644]);
  files.push([FIXTURES_FILE, `${JSON.stringify(content.fixtures, null, 2)}\n`, 0o644]);
  files.push(['.env', envText, 0o600]);

  const made = !existsSync(input.dir);
  if (made) makeFolderSync(input.dir, 0o755);
  // Checked again once made: a folder another user made meanwhile, or a link, is not ours to fill.
  checkProjectFolder(input.dir);
  const written: string[] = [];
  try {
    for (const [rel, text, mode] of files) {
      const path = join(input.dir, rel);
      const parent = dirname(path);
      if (parent !== input.dir) {
        checkProjectFolder(parent);
        makeFolderSync(parent, 0o755);
        checkProjectFolder(parent);
      }
      await createFile(path, text, { mode, code: 'project_file_exists' });
      written.push(rel);
    }
  } catch (err) {
    if (made) removeSync(input.dir, { recursive: true });
    else for (const rel of written) removeSync(join(input.dir, rel));
    throw err;
  }
  return written.sort();
}
