// A rotated secret of a project's app, put into the project's .env (`mkt apps rotate-secret` run in
// a project `mkt init` wrote): the line is replaced, every other line kept; the value is checked as
// every .env value is (src/platform/file-values.ts), and the file replaced atomically (0600).
import { join } from 'node:path';
import type { Deps } from '../deps.js';
import { envFileLine } from '../platform/file-values.js';
import { readOwnFileSync, writeFileAtomic } from '../platform/fs-atomic.js';
import { findProject } from './project.js';

/** What became of the project's .env: updated, nothing to do (not this project's app), or what to change by hand. */
export type EnvUpdate = { updated: string } | { manual: string } | undefined;

/**
 * Replaces `name`'s line in the .env of the project `deps.cwd` is in, when that project's app is
 * `appId`; undefined when it is not (or there is no project).
 */
export async function updateProjectEnv(
  deps: Pick<Deps, 'cwd'>,
  input: { appId: string; name: string; value: string },
): Promise<EnvUpdate> {
  const project = findProject(deps.cwd);
  if (project?.file.app_id !== input.appId) return undefined;
  const path = join(project.dir, '.env');
  const line = envFileLine(input.name, input.value);
  const text = readOwnFileSync(path, { maxBytes: 1024 * 1024, code: 'env_file_unsafe' });
  if (text === undefined)
    return { manual: `${path} is missing: set ${input.name} in it (the new secret is above).` };
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.startsWith(`${input.name}=`));
  if (at >= 0) lines[at] = line.slice(0, -1);
  else lines.splice(lines.at(-1) === '' ? -1 : lines.length, 0, line.slice(0, -1));
  await writeFileAtomic(path, lines.join('\n'), { mode: 0o600 });
  return { updated: path };
}
