// The .deb's /usr/bin/mkt reached through a symbolic link (~/bin/mkt -> /usr/bin/mkt) runs the Node
// of /usr/lib/mkt beside its real path, never a `../lib/mkt/lib/node` next to the link's folder.
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { debLauncher, standaloneLauncher } from '../../scripts/launchers.js';
import { tempDir } from '../support/cli.js';

let work: { path: string; remove(): Promise<void> };
beforeAll(async () => {
  work = await tempDir('mkt-launcher-');
});
afterAll(() => work.remove());

/** A stand-in `node` that says which one it is and what it was asked to run. */
async function fakeNode(path: string, name: string): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, `#!/bin/sh\necho "${name} $*"\n`);
  await chmod(path, 0o755);
}

describe('the launchers', () => {
  it('the .deb one, through a link in another folder, runs the Node beside its real path', async () => {
    const root = join(work.path, 'root');
    await mkdir(join(root, 'usr/bin'), { recursive: true });
    await writeFile(join(root, 'usr/bin/mkt'), debLauncher(), { mode: 0o755 });
    await fakeNode(join(root, 'usr/lib/mkt/lib/node'), 'real');
    // The link's folder, with a node planted where ../lib/mkt/lib/node of the link would be.
    const home = join(work.path, 'home');
    await fakeNode(join(home, 'lib/mkt/lib/node'), 'planted');
    await mkdir(join(home, 'bin'), { recursive: true });
    await symlink(join(root, 'usr/bin/mkt'), join(home, 'bin/mkt'));
    // A relative link to the link, too.
    await symlink('mkt', join(home, 'bin/mkt2'));
    for (const entry of ['bin/mkt', 'bin/mkt2']) {
      const out = execFileSync(join(home, entry), ['--version'], { encoding: 'utf8' });
      expect(out).toBe(`real ${join(root, 'usr/bin')}/../lib/mkt/bin/run.js --version\n`);
    }
    // Run directly, it finds its own, as before.
    expect(execFileSync(join(root, 'usr/bin/mkt'), ['x'], { encoding: 'utf8' })).toMatch(/^real /);
  });

  it('the standalone one, through a link, runs the Node beside its real path', async () => {
    const dir = join(work.path, 'standalone/bin');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'mkt'), standaloneLauncher(), { mode: 0o755 });
    await fakeNode(join(work.path, 'standalone/lib/node'), 'real');
    const other = join(work.path, 'other');
    await fakeNode(join(work.path, 'lib/node'), 'planted'); // ../lib/node of the link's folder
    await mkdir(other, { recursive: true });
    await symlink(join(dir, 'mkt'), join(other, 'mkt'));
    expect(execFileSync(join(other, 'mkt'), [], { encoding: 'utf8' })).toBe(`real ${join(dir, 'run.js')}\n`);
  });
});
