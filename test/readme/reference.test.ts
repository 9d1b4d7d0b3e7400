import { execFile } from 'node:child_process';
import { copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMkt, tempDir } from '../support/cli.js';

// The command reference, docs/commands.md, is what `mkt COMMAND --help` says (regenerate it with
// `npm run readme` after changing a command): it is what the generator writes today, every command
// has its section, and each section's help text is the command's own, word for word.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const REFERENCE = join(ROOT, 'docs/commands.md');
const readme = await readFile(REFERENCE, 'utf8');
const manifest = JSON.parse(
  await readFile(new URL('../../oclif.manifest.json', import.meta.url), 'utf8'),
) as {
  commands: Record<string, { hidden?: boolean }>;
};
const ids = Object.keys(manifest.commands).filter((id) => !manifest.commands[id]!.hidden);

let dir: { path: string; remove(): Promise<void> };
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

/** Words only: the reference and the help wrap at different widths. */
const words = (text: string) => text.replace(/\s+/g, ' ').trim();

/** The fenced block of README's section for `mkt ID …`. */
function section(id: string): string | undefined {
  const heading = readme.split('\n## ').find((s) => s.startsWith(`\`mkt ${id.replace(/:/g, ' ')}`));
  const line = heading?.split('\n')[0];
  if (line && !new RegExp(`^\`mkt ${id.replace(/:/g, ' ')}( [A-Z[]|\`)`).test(line)) return undefined;
  return /```\n([\s\S]*?)```/.exec(heading ?? '')?.[1];
}

describe('the command reference (docs/commands.md)', () => {
  it('is what `npm run readme` writes from the build today', async () => {
    // The script's own command line, run on a copy, so that the checked-in file is left alone.
    const pjson = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const [tool, ...args] = pjson.scripts.readme!.split(' ');
    expect(args).toContain('docs/commands.md');
    const copy = join(dir.path, 'commands.md');
    await copyFile(REFERENCE, copy);
    const at = args.indexOf('docs/commands.md');
    args[at] = copy;
    await promisify(execFile)(join(ROOT, 'node_modules/.bin', tool!), args, {
      cwd: ROOT,
      env: { ...process.env, OCLIF_SKIP_NEW_VERSION_CHECK: 'true' },
    });
    expect(await readFile(copy, 'utf8'), 'docs/commands.md is out of date: run npm run readme').toBe(readme);
  }, 120_000);

  it('has a section for every command, and no section for a command that is gone', () => {
    for (const id of ids) expect(section(id), id).toBeDefined();
    const headed = [...readme.matchAll(/^## `mkt ([a-z][a-z -]*?)(?: [A-Z[].*)?`$/gm)].map((m) =>
      m[1]!.trim(),
    );
    for (const name of headed) expect(ids, name).toContain(name.replace(/ /g, ':'));
  });

  it('says for each command what its --help says', async () => {
    // The plugins' commands (help, autocomplete) print their own help texts.
    const ours = ids.filter((id) => id !== 'help' && !id.startsWith('autocomplete'));
    for (let i = 0; i < ours.length; i += 4) {
      await Promise.all(
        ours.slice(i, i + 4).map(async (id) => {
          const help = await runMkt([...id.split(':'), '--help'], dir.path);
          expect(help.code, id).toBe(0);
          expect(words(help.stdout), `docs/commands.md's section of ${id} (run npm run readme)`).toContain(
            words(section(id)!),
          );
        }),
      );
    }
  }, 240_000);
});
