// The project file `mkt init` writes (mkt.json, committed): which app the project is, its template,
// port and command. `mkt dev` runs it; every command run inside the project acts on its app unless
// told otherwise (src/apps/resolve.ts).
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { UsageError } from '../errors.js';
import { APP_ID } from '../wire.js';

export const PROJECT_FILE = 'mkt.json';

/** The install line of each template's README (Debian's pip installs only into a venv; its packages count). */
export const INSTALL = {
  node: 'npm install',
  python: 'python3 -m venv --system-site-packages .venv && .venv/bin/pip install -r requirements.txt',
} as const;

/** What mkt reads from a project's mkt.json. */
export interface ProjectFile {
  app_id: string;
  template: 'node' | 'python';
  port: number;
  command: string[];
}

/** A project found: its folder and its file. */
export interface Project {
  dir: string;
  file: Partial<ProjectFile>;
}

/** The project file in `dir`, or undefined where there is none; a file mkt cannot read is a usage error. */
export function readProject(dir: string): Project | undefined {
  const path = join(dir, PROJECT_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR')
      return undefined;
    throw err;
  }
  try {
    const value = JSON.parse(text) as Partial<ProjectFile>;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('not an object');
    if (
      value.command !== undefined &&
      !(
        Array.isArray(value.command) &&
        value.command.length > 0 &&
        value.command.every((a) => typeof a === 'string')
      )
    )
      throw new Error('"command" must be a non-empty array of strings');
    if (value.app_id !== undefined && !(typeof value.app_id === 'string' && APP_ID.test(value.app_id)))
      throw new Error('"app_id" must be an app id (app_…)');
    if (value.port !== undefined && !(Number.isInteger(value.port) && value.port >= 1 && value.port <= 65535))
      throw new Error('"port" must be a port number');
    return { dir, file: value };
  } catch (err) {
    throw new UsageError(`${path} is not a project file mkt can read: ${(err as Error).message}.`, {
      code: 'bad_project_file',
    });
  }
}

/**
 * The project the folder `cwd` is in: its own mkt.json, or the nearest one above it that this user
 * owns (one another user planted in a shared folder above, such as /tmp, is passed over).
 */
export function findProject(cwd: string): Project | undefined {
  for (let dir = cwd; ; dir = dirname(dir)) {
    const owner = ownerOf(join(dir, PROJECT_FILE));
    if (owner !== undefined && (owner === process.getuid?.() || process.getuid === undefined)) {
      const project = readProject(dir);
      if (project) return project;
    }
    if (dirname(dir) === dir) return undefined;
  }
}

function ownerOf(path: string): number | undefined {
  try {
    return statSync(path).uid;
  } catch {
    return undefined;
  }
}
