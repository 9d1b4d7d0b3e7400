import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runMkt, tempDir, type MktResult } from '../support/cli.js';

// bin/run.js loads the bundle through src/boot.ts, which keeps V8's compiled code in mkt's cache
// folder. The cache is only a shortcut: whatever state it is in, mkt prints the same bytes.

let work: { path: string; remove(): Promise<void> };
let reference: MktResult;
const args = ['config', 'get', '--help'];

beforeAll(async () => {
  work = await tempDir('mkt-code-cache-');
  reference = await mkt('no-cache', join(work.path, 'unused-cache'));
  expect(reference).toMatchObject({ code: 0, stderr: '' });
});
afterAll(() => work.remove());

/**
 * `mkt config get --help` with its own config folder and the given cache folder. The help screens
 * kept there (src/boot.ts, helpFromCache) are removed first: every run renders its screen through
 * the code cache.
 */
async function mkt(name: string, cacheDir: string, argv = args): Promise<MktResult> {
  const dir = join(work.path, name);
  await mkdir(dir, { recursive: true });
  const folder = join(cacheDir, 'code-cache');
  for (const f of await readdir(folder).catch(() => []))
    if (f.endsWith('.txt')) await rm(join(folder, f), { force: true });
  return runMkt(argv, dir, { env: { MKT_CACHE_DIR: cacheDir } });
}

/** A cache file's first line: its name, then the module keys it has seen. */
async function header(file: string): Promise<[string, string[]]> {
  const line = (await readFile(file, 'latin1')).split('\n')[0]!;
  const at = line.indexOf(' [');
  return [line.slice(0, at), JSON.parse(line.slice(at + 1))];
}

/** The code caches in the cache folder's code-cache/ (none when it does not exist). */
async function files(cacheDir: string): Promise<string[]> {
  return (await readdir(join(cacheDir, 'code-cache')).catch(() => [])).filter((f) => !f.endsWith('.txt'));
}

describe('the code cache', () => {
  it('is written on the first run, used unchanged by the next, and grows with a new module', async () => {
    const cache = join(work.path, 'cache');
    expect(await mkt('first', cache)).toEqual(reference);
    const [name, ...rest] = (await files(cache)).filter((f) => f.endsWith('.v8'));
    expect(rest).toEqual([]);
    // Every command's help screen shares one cache: the help, not the command, runs.
    expect(name).toMatch(
      new RegExp(`^[0-9a-f]{16}-command-help-node${process.version}-${process.arch}\\.v8$`),
    );
    const file = join(cache, 'code-cache', name!);
    const written = await stat(file);
    if (process.platform !== 'win32') {
      expect((await stat(join(cache, 'code-cache'))).mode & 0o777).toBe(0o700);
      expect(written.mode & 0o777).toBe(0o600);
    }
    expect(await header(file)).toEqual([`mkt-code-cache/2 ${name!.slice(0, -3)}`, ['oclif', 'help']]);

    // Accepted by V8 and nothing new compiled: the file stays as it was, also for another command's help.
    expect(await mkt('second', cache)).toEqual(reference);
    expect((await mkt('other-help', cache, ['apps', 'list', '--help'])).code).toBe(0);
    expect((await stat(file)).mtimeMs).toBe(written.mtimeMs);
    expect((await stat(file)).ino).toBe(written.ino);

    // A command has a cache of its own, and a part that loads a new module gets a cache that holds it.
    expect((await mkt('third', cache, ['config', 'list'])).code).toBe(0);
    expect((await mkt('fourth', cache, ['help', '--nested-commands'])).code).toBe(0);
    const part = (p: string) => `${name!.slice(0, 16)}-${p}-node${process.version}-${process.arch}.v8`;
    expect((await files(cache)).sort()).toEqual([name!, part('config.list'), part('help'), 'node'].sort());
    expect((await header(join(cache, 'code-cache', part('config.list'))))[1]).toEqual([
      'oclif',
      'commands/config/list',
    ]);
    expect((await header(join(cache, 'code-cache', part('help'))))[1]).toEqual([
      'oclif',
      'commands/help',
      'help',
    ]);
    expect((await stat(file)).ino).toBe(written.ino);
  });

  it('keeps one cache per set of Node options: runs that alternate them do not replace each other', async () => {
    const cache = join(work.path, 'cache-options');
    const run = (name: string, nodeOptions?: string) => {
      const dir = join(work.path, name);
      return mkdir(dir, { recursive: true }).then(() =>
        runMkt(args, dir, { env: { MKT_CACHE_DIR: cache, NODE_OPTIONS: nodeOptions } }),
      );
    };
    expect(await run('plain')).toEqual(reference);
    const [plain] = await files(cache);
    const written = await stat(join(cache, 'code-cache', plain!));
    // V8 rejects a cache made under other flags: this run writes one of its own, tagged.
    expect(await run('bigger-heap', '--max-old-space-size=512')).toEqual(reference);
    const tagged = (await files(cache)).filter((f) => f !== plain && f.endsWith('.v8'));
    expect(tagged).toHaveLength(1);
    expect(tagged[0]).toMatch(/-command-help-o[0-9a-f]{8}-node/);
    // And each is used as it is by the next run with its options.
    expect(await run('plain-again')).toEqual(reference);
    expect(await run('bigger-heap-again', '--max-old-space-size=512')).toEqual(reference);
    expect((await stat(join(cache, 'code-cache', plain!))).mtimeMs).toBe(written.mtimeMs);
    expect((await files(cache)).filter((f) => f.endsWith('.v8'))).toHaveLength(2);
  });

  it('is not written by a --jq run, which changes V8 flags (Liftoff only): the next start would refuse it', async () => {
    const cache = join(work.path, 'cache-jq');
    const jq = () => mkt('jq', cache, ['config', 'list', '--jq', '.profile']);
    // A first run with --jq: no cache of its part (one made under its flags was refused at every start).
    expect(await jq()).toMatchObject({ code: 0, stdout: 'default\n' });
    expect((await files(cache)).filter((f) => f.includes('-config.list-'))).toEqual([]);
    // A run without writes it; a --jq run after it leaves it as it is.
    expect(await mkt('jq', cache, ['config', 'list', '--json'])).toMatchObject({ code: 0 });
    const [name] = (await files(cache)).filter((f) => f.includes('-config.list-'));
    const before = await readFile(join(cache, 'code-cache', name!));
    expect(await jq()).toMatchObject({ code: 0, stdout: 'default\n' });
    expect((await readFile(join(cache, 'code-cache', name!))).equals(before)).toBe(true);
  });

  it("drops another build's cache unwritten for a week, and keeps a recent one", async () => {
    const cache = join(work.path, 'builds');
    await mkdir(join(cache, 'code-cache'), { recursive: true });
    const old = join(cache, 'code-cache', `0123456789abcdef-node${process.version}-${process.arch}.v8`);
    const recent = join(cache, 'code-cache', `fedcba9876543210-node${process.version}-${process.arch}.v8`);
    await writeFile(old, '["oclif"]\n');
    await writeFile(recent, '["oclif"]\n');
    // The key an older mkt kept beside its caches (for a keyed hash no longer made) goes too.
    await writeFile(join(cache, 'code-cache', 'key'), Buffer.alloc(32), { mode: 0o600 });
    const eightDaysAgo = new Date(Date.now() - 8 * 24 * 3600 * 1000);
    await utimes(old, eightDaysAgo, eightDaysAgo);
    expect(await mkt('builds', cache)).toEqual(reference);
    const left = (await files(cache)).filter((f) => f.endsWith('.v8'));
    expect(left).toHaveLength(2);
    expect(left).toContain('fedcba9876543210-node' + `${process.version}-${process.arch}.v8`);
    expect(left).not.toContain('0123456789abcdef-node' + `${process.version}-${process.arch}.v8`);
    expect(await files(cache)).not.toContain('key');
  });

  it('is replaced when it is damaged, and the run prints the same', async () => {
    const cache = join(work.path, 'damaged');
    await mkt('damaged-first', cache);
    const [name] = (await files(cache)).filter((f) => f.endsWith('.v8'));
    const file = join(cache, 'code-cache', name!);
    const good = await readFile(file);
    for (const damage of [
      Buffer.from('not a cache'),
      Buffer.from('5\nnot a list of modules'),
      // A valid header, V8's data cut short and then garbage.
      Buffer.concat([good.subarray(0, good.indexOf(10) + 1), Buffer.alloc(4096, 0x5a)]),
      Buffer.alloc(0),
    ]) {
      await writeFile(file, damage);
      expect(await mkt('damaged', cache)).toEqual(reference);
      expect((await readFile(file)).length).toBeGreaterThan(4096 * 8);
    }
  });

  it('is ignored when the folder cannot be created', async () => {
    const blocker = join(work.path, 'a-file');
    await writeFile(blocker, '');
    expect(await mkt('blocked', join(blocker, 'cache'))).toEqual(reference);
  });

  it.runIf(process.platform === 'linux' && process.getuid?.() === 0)(
    'leaves nothing behind on a full disk',
    async () => {
      const cache = join(work.path, 'full');
      await mkdir(cache);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', cache]);
      try {
        expect(await mkt('full', cache)).toEqual(reference);
        expect((await files(cache)).filter((f) => f.endsWith('.v8'))).toEqual([]);
      } finally {
        execFileSync('umount', [cache]);
      }
    },
  );

  it('is written whole when many runs start at once', async () => {
    const cache = join(work.path, 'concurrent');
    const runs = await Promise.all(Array.from({ length: 6 }, (_, i) => mkt(`concurrent-${i}`, cache)));
    for (const r of runs) expect(r).toEqual(reference);
    const [name, ...rest] = (await files(cache)).filter((f) => f.endsWith('.v8'));
    expect(rest).toEqual([]);
    const file = join(cache, 'code-cache', name!);
    const written = await stat(file);
    // Whichever run wrote last, V8 accepts the file: the next run leaves it alone.
    expect(await mkt('after-concurrent', cache)).toEqual(reference);
    expect((await stat(file)).ino).toBe(written.ino);
  });
});
