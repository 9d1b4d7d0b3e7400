// A kept help screen (src/boot.ts) does not survive an upgrade that keeps file times: a copy made
// with `cp -p`, or a store where every file's mtime is 1, changes package.json's version but neither
// its size nor its time; the root screen must show the new version.
import { execFileSync } from 'node:child_process';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMkt, tempDir } from '../support/cli.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
let work: { path: string; remove(): Promise<void> };
beforeAll(async () => {
  work = await tempDir('mkt-upgrade-');
});
afterAll(() => work.remove());

describe('a kept help screen', () => {
  it('is not shown after an upgrade that keeps every mtime at 1', async () => {
    const install = join(work.path, 'install');
    execFileSync('mkdir', ['-p', install]);
    execFileSync('cp', [
      '-rp',
      join(root, 'bin'),
      join(root, 'dist'),
      join(root, 'package.json'),
      join(root, 'oclif.manifest.json'),
      install,
    ]);
    await symlink(join(root, 'node_modules'), join(install, 'node_modules'));
    const pkg = join(install, 'package.json');
    const text = await readFile(pkg, 'utf8');
    const version = (JSON.parse(text) as { version: string }).version;
    // The same length: only the content tells the two apart.
    const next = version.replace(/\d$/, (d) => String((Number(d) + 1) % 10));
    const stamp = () =>
      execFileSync('find', [
        install,
        '-path',
        `${install}/node_modules`,
        '-prune',
        '-o',
        '-exec',
        'touch',
        '-h',
        '-d',
        '@1',
        '{}',
        '+',
      ]);
    stamp();
    const cache = join(work.path, 'cache');
    const help = () =>
      runMkt(['--help'], work.path, { bin: join(install, 'bin', 'run.js'), env: { MKT_CACHE_DIR: cache } });
    expect((await help()).stdout).toContain(`mkt/${version} `);
    expect((await help()).stdout).toContain(`mkt/${version} `); // now from the kept screen
    await writeFile(pkg, text.replace(`"version": "${version}"`, `"version": "${next}"`));
    stamp();
    const after = await help();
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toContain(`mkt/${next} `);
  });
});
