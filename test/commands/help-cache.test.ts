import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmod, copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HELP_ENV } from '../../src/boot.js';
import { baseEnv, MKT_BIN, runMkt, tempDir, type MktResult } from '../support/cli.js';
import { typeInTerminal } from '../support/terminal.js';

// A help screen, once printed, is kept in mkt's cache folder and printed again without loading
// oclif (src/boot.ts, helpFromCache): byte for byte what oclif printed, and only for the same build,
// words, terminal and environment.

let work: { path: string; remove(): Promise<void> };
let runs = 0;

beforeAll(async () => {
  work = await tempDir('mkt-help-cache-');
});
afterAll(() => work.remove());

/**
 * `mkt ARGS` with the given cache folder; the config folder (and HOME), which a kept screen's key
 * holds as the user's, is the same for every run.
 */
async function mkt(args: string[], cacheDir: string, env: Record<string, string> = {}): Promise<MktResult> {
  const dir = join(work.path, 'config');
  await mkdir(dir, { recursive: true });
  return runMkt(args, dir, { env: { MKT_CACHE_DIR: cacheDir, ...env } });
}

/** The kept help screens of a cache folder. */
async function kept(cacheDir: string): Promise<string[]> {
  return (await readdir(join(cacheDir, 'code-cache')).catch(() => [])).filter((f) => f.endsWith('.txt'));
}

/** Replaces what a kept screen prints, its key line and the copy of package.json after it left as they are. */
async function plant(file: string, text: string): Promise<void> {
  const bytes = await readFile(file);
  const pkg = await readFile(new URL('../../package.json', import.meta.url));
  const start = bytes.indexOf(10) + 1;
  expect(bytes.subarray(start, start + pkg.length).equals(pkg)).toBe(true);
  await writeFile(file, Buffer.concat([bytes.subarray(0, start + pkg.length), Buffer.from(text)]));
}

describe('kept help screens', () => {
  it('print what oclif printed, for the same words, terminal and variables only', async () => {
    const cache = join(work.path, 'cache');
    for (const args of [
      ['--help'],
      ['apps', '--help'],
      ['apps', 'list', '--help'],
      ['config', 'get', '--help'],
    ]) {
      const first = await mkt(args, cache);
      expect(first).toMatchObject({ code: 0, stderr: '' });
      expect(first.stdout).toContain('USAGE');
      expect(await mkt(args, cache)).toEqual(first);
    }
    // `mkt help apps list` is `mkt apps list --help`: the same screen, kept once.
    const list = await mkt(['apps', 'list', '--help'], cache);
    expect(await mkt(['help', 'apps', 'list'], cache)).toEqual(list);
    expect(await kept(cache)).toHaveLength(4);

    // What is printed is the kept text: changed here, it is printed changed…
    const apps: string[] = [];
    for (const f of await kept(cache)) {
      const key = (await readFile(join(cache, 'code-cache', f), 'utf8')).split('\n')[0]!;
      if (key.includes('["apps"],[')) apps.push(f);
    }
    expect(apps).toHaveLength(1);
    await plant(join(cache, 'code-cache', apps[0]!), 'KEPT\n');
    expect((await mkt(['apps', '--help'], cache)).stdout).toBe('KEPT\n');
    // …and a variable its key does not hold changes nothing.
    expect((await mkt(['apps', '--help'], cache, { SOME_OTHER_VARIABLE: '1' })).stdout).toBe('KEPT\n');

    // Another width, colour forced or another locale: rendered again, as without the kept screen.
    const others: Array<Record<string, string>> = [
      { OCLIF_COLUMNS: '60' },
      { FORCE_COLOR: '1' },
      { LC_ALL: 'fr_FR.UTF-8' },
    ];
    for (const env of others) {
      const fresh = await mkt(['apps', '--help'], join(work.path, `fresh-${++runs}`), env);
      expect(fresh.code).toBe(0);
      expect(await mkt(['apps', '--help'], cache, env)).toEqual(fresh);
    }
    expect(
      (await mkt(['apps', '--help'], join(work.path, 'narrow'), { OCLIF_COLUMNS: '60' })).stdout,
    ).not.toBe((await mkt(['apps', '--help'], join(work.path, 'wide'), { OCLIF_COLUMNS: '200' })).stdout);
  });

  it('holds no value of the environment: a token in a variable never reaches the file', async () => {
    const cache = join(work.path, 'tokens');
    const tokens = {
      MKT_API_KEY: 'live_SECRETkey1',
      NODE_AUTH_TOKEN: 'npm_SECRET2',
      CI_JOB_TOKEN: 'glcbt-SECRET3',
    };
    // Given or not, the same screen (the key takes only the variables a screen reads)…
    expect((await mkt(['apps', '--help'], cache, tokens)).code).toBe(0);
    expect((await mkt(['apps', '--help'], cache)).code).toBe(0);
    expect(await kept(cache)).toHaveLength(1);
    // …and a value it does read, only as a digest.
    expect(
      (await mkt(['apps', '--help'], cache, { MKT_NPM_REGISTRY: 'https://u:SECRET4@registry.test' })).code,
    ).toBe(0);
    for (const f of await kept(cache))
      expect(await readFile(join(cache, 'code-cache', f), 'utf8')).not.toMatch(/SECRET/);
  });

  it('keeps nothing of a screen that failed', async () => {
    const cache = join(work.path, 'failed');
    const res = await mkt(['no-such-command', '--help'], cache);
    expect(res.code).not.toBe(0);
    expect(await kept(cache)).toEqual([]);
  });

  it.skipIf(process.platform === 'win32')(
    'is neither read nor written in a folder others can write',
    async () => {
      const safe = join(work.path, 'safe');
      const reference = await mkt(['apps', '--help'], safe);
      const [file] = await kept(safe);
      await plant(join(safe, 'code-cache', file!), 'PLANTED\n');
      const open = join(work.path, 'open');
      await mkdir(join(open, 'code-cache'), { recursive: true });
      await copyFile(join(safe, 'code-cache', file!), join(open, 'code-cache', file!));
      await chmod(join(open, 'code-cache'), 0o777);
      expect(await mkt(['apps', '--help'], open)).toEqual(reference);
      expect(await kept(open)).toEqual([file]); // the planted one, not rewritten, not read
    },
  );

  it('reads no variable its key leaves out while it prints a screen', async () => {
    // Every read of process.env recorded (a preload, through NODE_OPTIONS) and written at exit.
    const recorder = join(work.path, 'record-env.cjs');
    await writeFile(
      recorder,
      `const read = new Set();
const real = process.env;
process.env = new Proxy(real, {
  get: (t, k) => (typeof k === 'string' && read.add(k), Reflect.get(t, k)),
  has: (t, k) => (typeof k === 'string' && read.add(k), Reflect.has(t, k)),
});
process.on('exit', () => require('node:fs').writeFileSync(real.MKT_TEST_ENV_READS, [...read].join('\\n')));`,
    );
    for (const args of [
      ['--help'],
      ['apps', '--help'],
      ['apps', 'payments', '--help'],
      ['webhooks', 'listen', '--help'],
    ]) {
      const out = join(work.path, `reads-${++runs}.txt`);
      const res = await mkt(args, join(work.path, `reads-cache-${runs}`), {
        NODE_OPTIONS: `--require ${recorder}`,
        MKT_TEST_ENV_READS: out,
      });
      expect(res).toMatchObject({ code: 0, stderr: '' });
      expect(await outside(out), args.join(' ')).toEqual([]);
    }
    // On a terminal, where the colour checks read more of the environment.
    const out = join(work.path, 'reads-terminal.txt');
    const env = {
      ...baseEnv(join(work.path, 'config')),
      MKT_CACHE_DIR: join(work.path, 'reads-terminal-cache'),
    };
    const terminal = typeInTerminal(`"${process.execPath}" "${MKT_BIN}" apps --help`, {
      env: { ...env, NODE_OPTIONS: `--require ${recorder}`, MKT_TEST_ENV_READS: out, TERM: 'xterm-256color' },
      timeoutMs: 15_000,
    });
    expect(await terminal.exit, terminal.screen()).toBe(0);
    expect(terminal.raw()).toContain('\u001b['); // in colour: the checks ran
    expect(await outside(out)).toEqual([]);
  });

  /** The variables a recorded run read that HELP_ENV does not match. */
  async function outside(file: string): Promise<string[]> {
    const names = (await readFile(file, 'utf8')).split('\n').filter((n) => n !== '' && n !== 'undefined');
    expect(names.length).toBeGreaterThan(5);
    return names.filter((n) => !HELP_ENV.test(n));
  }
});
