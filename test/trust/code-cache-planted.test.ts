// A V8 code cache is code: V8 checks only the length of the source it was compiled from. These
// tests plant the cache of a different script of the bundle's length, which writes a marker file,
// where another user could put it, and prove mkt never runs it and prints what it prints without it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { chmod, chown, lchown, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runMkt, tempDir, type MktResult } from '../support/cli.js';

const BUNDLE = fileURLToPath(new URL('../../dist/mkt.cjs', import.meta.url));
const OTHER_UID = 4242;
const asRoot = process.platform === 'linux' && process.getuid?.() === 0;
let work: { path: string; remove(): Promise<void> };
let reference: MktResult;
let name: string; // the cache's file name for this build
const args = ['config', 'get', '--help'];

async function mkt(cacheDir: string, argv = args): Promise<MktResult> {
  const dir = join(work.path, `config-${randomBytes(4).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  return runMkt(argv, dir, { env: { MKT_CACHE_DIR: cacheDir } });
}

/** V8's cache of a script as long as the bundle that writes `marker` when run (made by another Node). */
function evilCache(marker: string): Buffer {
  // V8 compares lengths in characters (the bundle holds a few non-ASCII ones).
  const source = readFileSync(BUNDLE, 'utf8');
  const program = `const vm = require('node:vm');
const length = ${source.length};
const head = '(function (exports, require, module, __filename, __dirname, __mktImport) {require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran");/*';
const text = head + ' '.repeat(length - head.length - 5) + '*/})\\n';
const script = new vm.Script(text, { filename: ${JSON.stringify(BUNDLE)} });
// Called once (with a harmless require) so that V8 compiles the function into the cache.
script.runInThisContext()({}, () => ({ writeFileSync() {} }));
process.stdout.write(script.createCachedData().toString('base64'));`;
  return Buffer.from(execFileSync(process.execPath, ['-e', program], { encoding: 'utf8' }), 'base64');
}

/** The cache file as mkt writes it: a line naming it and its module keys, then V8's data. */
const current = (data: Buffer, cacheName = name) =>
  Buffer.concat([Buffer.from(`mkt-code-cache/2 ${cacheName} ["oclif","help"]\n`), data]);
/** The cache file as mkt wrote it before, with a keyed hash under the attacker's own key. */
function keyed(data: Buffer, key: Buffer): Buffer {
  const keys = '["oclif","help"]';
  const mac = createHmac('sha256', key).update(`${name}\n${keys}\n`).update(data).digest('hex');
  return Buffer.concat([Buffer.from(`${mac} ${keys}\n`), data]);
}

/** Plants the evil cache in `cacheDir` in both formats in turn; mkt must never run it. */
async function provesNotRun(cacheDir: string, plant: (file: Buffer, key: Buffer) => Promise<void>) {
  for (const format of ['current', 'keyed'] as const) {
    const marker = join(work.path, `ran-${randomBytes(4).toString('hex')}`);
    const key = randomBytes(32);
    const data = evilCache(marker);
    await plant(format === 'current' ? current(data) : keyed(data, key), key);
    const res = await mkt(cacheDir);
    expect(existsSync(marker), `the planted ${format} cache ran`).toBe(false);
    expect(res).toEqual(reference);
  }
}

beforeAll(async () => {
  work = await tempDir('mkt-planted-');
  const own = join(work.path, 'own');
  reference = await mkt(own);
  expect(reference).toMatchObject({ code: 0, stderr: '' });
  name = (await readdir(join(own, 'code-cache'))).find((f) => f.endsWith('.v8'))!.slice(0, -3);
}, 60_000);
afterAll(() => work.remove());

describe('a planted compiled-code cache', () => {
  it.runIf(process.platform !== 'win32')(
    'in a folder anyone can write (0777) is never run',
    async () => {
      const cache = join(work.path, 'open');
      await mkdir(join(cache, 'code-cache'), { recursive: true });
      await chmod(cache, 0o777);
      await chmod(join(cache, 'code-cache'), 0o777);
      await provesNotRun(cache, async (file, key) => {
        await writeFile(join(cache, 'code-cache', `${name}.v8`), file);
        await writeFile(join(cache, 'code-cache', 'key'), key);
      });
      // --verbose says once why the cache is not used.
      const verbose = await mkt(cache, ['config', 'list', '--verbose']);
      expect(verbose.stderr.split('Not using the compiled-code cache').length - 1).toBe(1);
      expect(verbose.stderr).toContain('is writable by others (mode 777)');
    },
    60_000,
  );

  it.runIf(asRoot)(
    "in another user's folder is never run",
    async () => {
      const cache = join(work.path, 'theirs');
      await mkdir(join(cache, 'code-cache'), { recursive: true, mode: 0o700 });
      await provesNotRun(cache, async (file, key) => {
        for (const [f, bytes] of [
          [`${name}.v8`, file],
          ['key', key],
        ] as const) {
          await writeFile(join(cache, 'code-cache', f), bytes, { mode: 0o600 });
          await chown(join(cache, 'code-cache', f), OTHER_UID, OTHER_UID);
        }
        await chown(join(cache, 'code-cache'), OTHER_UID, OTHER_UID);
        await chown(cache, OTHER_UID, OTHER_UID);
      });
    },
    60_000,
  );

  it.runIf(asRoot)(
    "through a link to another user's file is never run",
    async () => {
      const cache = join(work.path, 'linked');
      await mkdir(join(cache, 'code-cache'), { recursive: true, mode: 0o700 });
      const elsewhere = join(work.path, 'elsewhere');
      await mkdir(elsewhere, { mode: 0o755 });
      await provesNotRun(cache, async (file, key) => {
        const id = randomBytes(4).toString('hex');
        for (const [f, bytes] of [
          [`${name}.v8`, file],
          ['key', key],
        ] as const) {
          const target = join(elsewhere, `${id}-${f}`);
          await writeFile(target, bytes, { mode: 0o644 });
          await chown(target, OTHER_UID, OTHER_UID);
          const link = join(cache, 'code-cache', f);
          await writeFile(link, '').then(() => import('node:fs/promises').then((fs) => fs.rm(link)));
          await symlink(target, link);
          await lchown(link, OTHER_UID, OTHER_UID).catch(() => undefined);
        }
      });
    },
    60_000,
  );

  it("made for another build, under this build's name, is never run", async () => {
    const cache = join(work.path, 'ours');
    expect(await mkt(cache)).toEqual(reference);
    const marker = join(work.path, 'ran-ours');
    const file = join(cache, 'code-cache', `${name}.v8`);
    const other = name.replace(/^[0-9a-f]{16}/, '0123456789abcdef');
    await writeFile(file, current(evilCache(marker), other), { mode: 0o600 });
    expect(await mkt(cache)).toEqual(reference);
    expect(existsSync(marker)).toBe(false);
    // …and is replaced by our own, which the next run uses unchanged.
    const ours = await stat(file);
    expect((await readFile(file)).subarray(0, 17 + name.length).toString()).toBe(`mkt-code-cache/2 ${name}`);
    expect(await mkt(cache)).toEqual(reference);
    expect((await stat(file)).ino).toBe(ours.ino);
  }, 60_000);
});
