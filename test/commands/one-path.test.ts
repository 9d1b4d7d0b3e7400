import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFile, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MKT_BIN, runMkt, tempDir, type MktResult } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';

// There is one way mkt runs: bin/run.js hands every argv to oclif, bundled in dist/
// (esbuild.config.js). This file checks that the bundle is oclif unchanged: every command and every
// help screen gives the same bytes and exit code as oclif run the plain way — from node_modules, on
// tsc's output in build/, the help and autocomplete plugins as plugins, no manifest.

const root = fileURLToPath(new URL('../../', import.meta.url));
const ctx = useSandbox();
let reference: { path: string; remove(): Promise<void> };
let referenceBin: string;
let manifest: { commands: Record<string, { hidden?: boolean }> };

beforeAll(async () => {
  reference = await tempDir('mkt-reference-');
  const pjson = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
  pjson.oclif.plugins = ['@oclif/plugin-help', '@oclif/plugin-autocomplete'];
  // Commands, help class and hooks from tsc's output instead of the bundle.
  await writeFile(
    join(reference.path, 'package.json'),
    JSON.stringify(pjson).replaceAll('./dist/', './build/'),
  );
  await symlink(join(root, 'build'), join(reference.path, 'build'));
  await symlink(join(root, 'node_modules'), join(reference.path, 'node_modules'));
  await mkdir(join(reference.path, 'bin'));
  const bin = await readFile(MKT_BIN, 'utf8');
  expect(bin).toContain("require('../dist/oclif.js')");
  referenceBin = join(reference.path, 'bin', 'run.js');
  await writeFile(referenceBin, bin.replace("require('../dist/oclif.js')", "require('@oclif/core')"));
  await copyFile(join(root, 'bin', 'package.json'), join(reference.path, 'bin', 'package.json'));
  manifest = JSON.parse(await readFile(join(root, 'oclif.manifest.json'), 'utf8'));
});
afterAll(() => reference.remove());

/** Runs one of the two entry points with the same environment and a fresh config folder of its own. */
let runs = 0;
async function run(bin: string, args: string[], env: Record<string, string | undefined>): Promise<MktResult> {
  const dir = join(ctx.dir, `one-path-${++runs}`);
  await mkdir(dir);
  try {
    return await runMkt(args, dir, { bin, cwd: dir, env: { COLUMNS: '100', ...env } });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Checks each of `cases` with `check`, four at a time (each a pair of processes that only read). */
async function eachOf<T>(cases: T[], check: (c: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < cases.length) await check(cases[next++]!);
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}

async function expectSame(args: string[], env: Record<string, string | undefined> = {}) {
  const bundled = await run(MKT_BIN, args, env);
  const plain = await run(referenceBin, args, env);
  // Process ids, the server's request ids and each run's config folder differ from run to run.
  const pid = (r: MktResult) => ({
    ...r,
    stdout: r.stdout.replace(/one-path-\d+/g, 'one-path-N'),
    stderr: r.stderr
      .replace(/\(node:\d+\)/g, '(node:PID)')
      .replace(/req_[0-9a-f]+/g, 'req_ID')
      .replace(/one-path-\d+/g, 'one-path-N'),
  });
  expect({ args, ...pid(bundled) }).toEqual({ args, ...pid(plain) });
  return bundled;
}

describe('the bundled CLI is oclif unchanged', () => {
  it('has one entry point that loads oclif from the bundle', async () => {
    const bin = await readFile(MKT_BIN, 'utf8');
    expect(bin).not.toMatch(/fast-path|@oclif\/core/);
    const ids = Object.keys(manifest.commands);
    for (const id of ['whoami', 'help', 'autocomplete', 'apps:list', 'sandbox:start'])
      expect(ids).toContain(id);
  });

  it('prints every help screen the same', async () => {
    const ids = Object.keys(manifest.commands).filter((id) => !manifest.commands[id]!.hidden);
    const topics = [...new Set(ids.filter((id) => id.includes(':')).map((id) => id.split(':')[0]!))];
    const screens = [[], ['--help'], ['help'], ['help', 'apps', 'list'], ['-h'], ['--version']];
    for (const topic of topics) screens.push([topic], [topic, '--help']);
    for (const id of ids) screens.push([...id.split(':'), '--help']);
    await eachOf(screens, async (args) => {
      const r = await expectSame(args);
      expect(r.stdout + r.stderr, args.join(' ')).not.toBe('');
    });
  }, 300_000);

  it('gives every command the same usage errors', async () => {
    await eachOf(Object.keys(manifest.commands), async (id) => {
      await expectSame([...id.split(':'), '--no-such-flag'], { MKT_SITE_URL: ctx.sandbox.siteUrl });
    });
    await expectSame(['whoam']);
    await expectSame(['apps', 'lsit']);
  }, 300_000);

  it('runs commands against the sandbox the same', async () => {
    const env = { MKT_SITE_URL: ctx.sandbox.siteUrl, MKT_API_KEY: ctx.sandbox.seed.test_key };
    const user = ctx.sandbox.seed.users[0]!.id;
    const runs = [
      ['whoami'],
      ['whoami', '--json'],
      ['entitlements', '--json'],
      ['entitlements', '--user', user, '--json'],
      ['entitlements', '--user', user, '--feature', 'export'],
      ['entitlements', '--user', 'not-a-user'],
      ['apps', 'list', '--json'],
      ['plans', 'list', '--json'],
      ['keys', 'list', '--json'],
      ['auth', 'status', '--json'],
      ['webhooks', 'deliveries', '--json'],
      ['config', 'get', 'site-url'],
      ['config', 'list', '--json'],
      ['trigger'],
      ['api', 'GET', '/api/v1/whoami'],
    ];
    for (const args of runs) await expectSame(args, env);
    await expectSame(['whoami', '--json'], { MKT_SITE_URL: ctx.sandbox.siteUrl });
  }, 120_000);

  it('writes the same completion scripts', async () => {
    for (const shell of ['bash', 'zsh']) await expectSame(['autocomplete', shell]);
  }, 60_000);
});
