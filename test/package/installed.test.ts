import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { copyFile, mkdir, readdir, symlink } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { npmGlobalConfig, tempDir } from '../support/cli.js';

// The package as npm ships it: packed from a fresh clone (tracked files only: `prepack` builds),
// installed globally into a temporary prefix, run from another folder on every Node version users
// run — the floor (22.13), the project's own 22 and 24, as the registry ships them
// (test/package/node-versions, installed by scripts/test-everything.sh) — and refused on Node 20.

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const versions = join(root, 'test/package/node-versions/node_modules');
const nodes: Array<[string, string]> = [
  ['22.13', join(versions, 'node22/bin/node')],
  [process.versions.node, process.execPath],
  ['24', join(versions, 'node24/bin/node')],
];

let work: { path: string; remove(): Promise<void> };
let prefix: string;
let tarball: string;
let packOutput: string;

beforeAll(async () => {
  work = await tempDir('mkt-package-');
  const clone = join(work.path, 'clone');
  const { stdout: files } = await run('git', ['ls-files', '-z'], { cwd: root, maxBuffer: 16 << 20 });
  for (const file of files.split('\0').filter((f) => f && existsSync(join(root, f)))) {
    await mkdir(dirname(join(clone, file)), { recursive: true });
    await copyFile(join(root, file), join(clone, file));
  }
  // The build's tools, as `npm ci` would install them (the registry is not needed twice).
  await symlink(join(root, 'node_modules'), join(clone, 'node_modules'));
  const packed = await run('npm', ['pack', '--json', '--pack-destination', work.path], {
    cwd: clone,
    maxBuffer: 64 << 20,
  });
  packOutput = packed.stdout + packed.stderr;
  const [{ filename }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('[')));
  tarball = join(work.path, filename);
  prefix = join(work.path, 'prefix');
  await run(
    'npm',
    ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball],
    {
      cwd: work.path,
      // The machine's npm settings and cache (the tests' HOME is a temporary folder).
      env: {
        ...process.env,
        npm_config_globalconfig: npmGlobalConfig(),
        npm_config_cache: join(userInfo().homedir, '.npm'),
      },
    },
  );
}, 300_000);
afterAll(() => work?.remove());

describe('npm pack', () => {
  it('ships the built CLI and nothing of the repository', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    const files = stdout.split('\n').filter(Boolean);
    for (const file of [
      'package/bin/run.js',
      'package/dist/oclif.js',
      'package/oclif.manifest.json',
      // One command's entry each, and their index (scripts/split-manifest.js).
      'package/dist/manifests/index.json',
      'package/dist/manifests/whoami.json',
      'package/schema/sandbox-fixtures.schema.json',
      'package/schema/openapi.json',
    ])
      expect(files).toContain(file);
    expect(files.some((f) => f.startsWith('package/dist/commands/'))).toBe(true);
    expect(files.filter((f) => /^package\/(src|test|build|bench|scripts)\//.test(f))).toEqual([]);
  });

  it('builds quietly: no "update available" notice from oclif', () => {
    expect(packOutput).not.toMatch(/update available/i);
  });

  it('installs without the repository: the installed mkt is a copy', async () => {
    const installed = join(prefix, 'lib/node_modules/mkt');
    expect(await readdir(installed)).toEqual(expect.arrayContaining(['bin', 'dist', 'node_modules']));
    expect(existsSync(join(installed, 'node_modules/vitest'))).toBe(false);
  });
});

it('refuses Node 20 with one clear sentence, before anything else runs', async () => {
  const node20 = join(versions, 'node20/bin/node');
  const bin = join(prefix, 'lib/node_modules/mkt/bin/run.js');
  const refused = await run(node20, [bin, 'whoami']).then(
    () => {
      throw new Error('mkt ran on Node 20');
    },
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
  expect(refused.code).toBe(1);
  expect(refused.stdout).toBe('');
  expect(refused.stderr).toMatch(/^mkt needs Node\.js 22\.13 or newer; this is Node\.js v20\.\d+\.\d+\.\n/);
  // An installed package has no Node of its own: the line that runs it on Node 22 from the registry.
  expect(refused.stderr).toContain(`  Try: npx -y node@22 ${realpathSync(bin)} whoami\n`);
});

describe.each(nodes)('the installed mkt on Node %s', (major, node) => {
  let home: { path: string; remove(): Promise<void> };
  beforeAll(async () => {
    if (!existsSync(node))
      throw new Error(
        `Node ${major} is missing (${node}): run \`npm ci --prefix test/package/node-versions\` (scripts/test-everything.sh does).`,
      );
    home = await tempDir('mkt-home-');
  });
  afterAll(() => home?.remove());

  /**
   * `mkt ARGS` as a user types it: found on PATH, run by the `node` first on PATH, from another folder.
   * Not runMkt: that runs this checkout's bin/run.js with the test runner's node and environment.
   */
  function mkt(args: string[], env: Record<string, string> = {}) {
    return spawn('mkt', args, {
      cwd: home.path,
      env: {
        PATH: `${dirname(node)}:${join(prefix, 'bin')}:/usr/bin:/bin`,
        HOME: home.path,
        MKT_CONFIG_DIR: join(home.path, 'config'),
        MKT_CREDENTIAL_STORE: 'file',
        ...env,
      },
    });
  }
  function result(
    child: ReturnType<typeof mkt>,
  ): Promise<{ code: number | null; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdin.end();
    return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  }

  it('prints its version and its help', async () => {
    const { stdout: version } = await run(node, ['--version']);
    expect(version.trim()).toMatch(new RegExp(`^v${major.replaceAll('.', '\\.')}\\.?`));
    const v = await result(mkt(['--version']));
    expect(v).toMatchObject({ code: 0, stderr: '' });
    expect(v.stdout).toBe(`mkt/0.1.0 ${process.platform}-${process.arch} node-${version.trim()}\n`);
    const help = await result(mkt(['--help']));
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/USAGE\n {2}\$ mkt \[COMMAND\]/);
    expect(help.stdout).toContain('whoami');
  });

  it('starts a sandbox and answers whoami with its key', async () => {
    const sandbox = mkt(['sandbox', 'start', '--port', '0', '--json']);
    const closed = result(sandbox);
    let text = '';
    const info = await new Promise<{ site_url: string; test_key: string }>((resolve, reject) => {
      sandbox.stdout.on('data', (d: string) => {
        text += d;
        try {
          resolve(JSON.parse(text));
        } catch {
          // the document is not complete yet
        }
      });
      void closed.then((r) => reject(new Error(`sandbox start exited ${r.code}: ${r.stderr}`)));
    });
    try {
      const who = await result(
        mkt(['whoami', '--json'], { MKT_SITE_URL: info.site_url, MKT_API_KEY: info.test_key }),
      );
      expect(who).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(who.stdout)).toMatchObject({ email: 'dev@sandbox.test' });
    } finally {
      sandbox.kill('SIGINT');
    }
    expect((await closed).code).toBe(130); // Ctrl-C, as the sandbox-start test expects
  });
});
