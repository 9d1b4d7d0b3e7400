import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { mkdir, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { npmGlobalConfig, tempDir } from '../support/cli.js';

// The standalone installs (scripts/pack-standalone.js, built here from the registry as CI does):
// the linux-x64 archive unpacked into an empty folder, and the .deb installed with `dpkg -i` (into
// a private root: the test never changes the machine). Each runs the first hour on a PATH with no
// Node at all, and on one whose only Node is 20 (which the npm package refuses): version, sandbox,
// both sign-ins (the loopback flow into the OS keychain where one answers), whoami, entitlements,
// webhooks listen forwarding to a server, trigger.

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const node20 = join(root, 'test/package/node-versions/node_modules/node20/bin');
const person = join(root, 'scripts/approve-consent.js');
const keychain = Boolean(process.env.DBUS_SESSION_BUS_ADDRESS);

let work: { path: string; remove(): Promise<void> };
let release: string;
const installs: Record<'archive' | 'deb', string> = { archive: '', deb: '' };
let packed: { stdout: string; stderr: string };

beforeAll(async () => {
  work = await tempDir('mkt-standalone-');
  release = join(work.path, 'release');
  packed = await run(process.execPath, [join(root, 'scripts/pack-standalone.js'), '--out', release], {
    cwd: root,
    maxBuffer: 16 << 20,
    // The machine's npm settings and cache (the tests' HOME may be a temporary folder).
    env: {
      ...process.env,
      npm_config_globalconfig: npmGlobalConfig(),
      npm_config_cache: join(userInfo().homedir, '.npm'),
    },
  });
  const archive = join(work.path, 'archive');
  await mkdir(archive);
  await run('tar', ['-xzf', join(release, 'mkt-v0.1.0-linux-x64.tar.gz'), '-C', archive]);
  installs.archive = join(archive, 'mkt/bin');
  // dpkg -i into a root of its own, with its own database (as root, as CI runs, or not).
  const system = join(work.path, 'root');
  for (const dir of ['var/lib/dpkg/info', 'var/lib/dpkg/updates'])
    await mkdir(join(system, dir), { recursive: true });
  await writeFile(join(system, 'var/lib/dpkg/status'), '');
  await run(
    'dpkg',
    [
      '--root',
      system,
      '--log',
      join(work.path, 'dpkg.log'),
      '--force-not-root',
      '--force-script-chrootless',
      '-i',
      join(release, 'mkt_0.1.0_amd64.deb'),
    ],
    { env: { ...process.env, PATH: `/usr/sbin:/sbin:${process.env.PATH}` } },
  );
  installs.deb = join(system, 'usr/bin');
}, 600_000);
afterAll(() => work?.remove());

it("the archive's bin/ holds mkt alone: first on a PATH, it leaves the person's node theirs", async () => {
  const { stdout } = await run('tar', ['-tzf', join(release, 'mkt-v0.1.0-linux-x64.tar.gz')], {
    maxBuffer: 64 << 20,
  });
  const bin = stdout.split('\n').filter((f) => /^mkt\/bin\/[^/]+$/.test(f));
  expect(bin).not.toContain('mkt/bin/node');
  expect(stdout).toMatch(/^mkt\/lib\/node$/m);
  // As the README has it: the archive's bin/ first on PATH, and a node of the person's own after it.
  const own = join(work.path, 'own-node');
  await mkdir(own);
  await writeFile(join(own, 'node'), '#!/bin/sh\necho "the person\'s node"\n', { mode: 0o755 });
  const path = `${installs.archive}:${own}:/usr/bin:/bin`;
  const which = await run('sh', ['-c', 'command -v node; node; mkt --version'], { env: { PATH: path } });
  expect(which.stdout).toBe(
    `${join(own, 'node')}\nthe person's node\nmkt/0.1.0 linux-x64 node-v22.23.3 (standalone)\n`,
  );
});

it("builds with no warning of oclif's about S3 (mkt's archives never update themselves)", () => {
  expect(packed.stdout + packed.stderr).not.toMatch(/S3|Warning/);
  expect(packed.stdout).toMatch(/mkt-v0\.1\.0-linux-x64\.tar\.gz +[\d.]+ MB/);
});

it('publishes SHA256SUMS that `sha256sum -c` accepts', async () => {
  const { stdout } = await run('sha256sum', ['-c', 'SHA256SUMS'], { cwd: release });
  expect(stdout).toBe('mkt-v0.1.0-linux-x64.tar.gz: OK\nmkt_0.1.0_amd64.deb: OK\n');
});

it('the .deb puts mkt at /usr/bin/mkt, its Node and only the linux-x64 keychain binding under /usr/lib/mkt', async () => {
  const { stdout } = await run('dpkg-deb', ['-c', join(release, 'mkt_0.1.0_amd64.deb')], {
    maxBuffer: 64 << 20,
  });
  expect(stdout).toMatch(/^-rwxr-xr-x root\/root .* \.\/usr\/bin\/mkt$/m);
  expect(stdout).toMatch(/ \.\/usr\/lib\/mkt\/lib\/node$/m);
  // /usr/bin holds mkt alone: no other program of the package stands on a PATH.
  expect(stdout).not.toMatch(/ \.\/usr\/bin\/(?!mkt$).+$/m);
  const bindings = stdout.match(/\.\/usr\/lib\/mkt\/node_modules\/@napi-rs\/keyring-[^/]+\/$/gm);
  expect(bindings).toEqual(['./usr/lib/mkt/node_modules/@napi-rs/keyring-linux-x64-gnu/']);
  expect(stdout).not.toMatch(/node_modules\/(vitest|esbuild|typescript|oclif)\//);
});

describe.each([
  ['archive', 'standalone', 'no Node'],
  ['deb', 'deb', 'no Node'],
  ['archive', 'standalone', 'Node 20 only'],
  ['deb', 'deb', 'Node 20 only'],
] as const)('the %s install (mkt --version says %s), PATH with %s', (install, how, nodes) => {
  let home: { path: string; remove(): Promise<void> };
  beforeAll(async () => {
    home = await tempDir('mkt-home-');
  });
  afterAll(() => home?.remove());

  /** `mkt ARGS` as a user types it: found on PATH, from another folder, nothing of the test's env. */
  function mkt(args: string[], env: Record<string, string> = {}, input = '') {
    const child = spawn('mkt', args, {
      cwd: home.path,
      env: {
        PATH: [installs[install], ...(nodes === 'no Node' ? [] : [node20, '/usr/bin', '/bin'])].join(':'),
        HOME: home.path,
        MKT_CONFIG_DIR: join(home.path, 'config'),
        MKT_DATA_DIR: join(home.path, 'data'),
        ...(keychain ? { DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS! } : {}),
        ...env,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdin.end(input);
    const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      child.on('close', (code) => resolve({ code, stdout, stderr })),
    );
    return { child, done, stdout: () => stdout, stderr: () => stderr };
  }
  const result = (args: string[], env: Record<string, string> = {}, input = '') => mkt(args, env, input).done;

  it('runs the first hour with the Node it carries', async () => {
    if (nodes !== 'no Node')
      expect((await run(join(node20, 'node'), ['--version'])).stdout).toMatch(/^v20\./);
    const version = await result(['--version']);
    expect(version).toEqual({ code: 0, stderr: '', stdout: `mkt/0.1.0 linux-x64 node-v22.23.3 (${how})\n` });

    const sandbox = mkt(['sandbox', 'start', '--port', '0', '--json']);
    const info = await new Promise<{
      site_url: string;
      test_key: string;
      app: { client_id: string; client_secret: string };
      users: Array<{ id: string; plan: string }>;
    }>((resolve, reject) => {
      const poll = setInterval(() => {
        try {
          resolve(JSON.parse(sandbox.stdout()));
          clearInterval(poll);
        } catch {
          // the document is not complete yet
        }
      }, 50);
      void sandbox.done.then(
        (r) => (clearInterval(poll), reject(new Error(`sandbox start exited ${r.code}: ${r.stderr}`))),
      );
    });
    const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
    const target = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (d: string) => (body += d));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const port = (target.address() as { port: number }).port;
    const site = { MKT_SITE_URL: info.site_url };
    try {
      // The API key, from stdin, then the commands a script runs.
      const keyLogin = await result(
        ['login', '--with-api-key', '--profile', 'ci'],
        site,
        `${info.test_key}\n`,
      );
      expect(keyLogin.code, keyLogin.stderr).toBe(0);
      const who = await result(['whoami', '--json', '--profile', 'ci'], site);
      expect(who.code, who.stderr).toBe(0);
      expect(JSON.parse(who.stdout)).toMatchObject({ email: 'dev@sandbox.test' });
      // --jq: jq's WebAssembly build as shipped (the pruned archive keeps the one Node loads).
      const email = await result(['whoami', '--jq', '.email', '--profile', 'ci'], site);
      expect(email).toMatchObject({ code: 0, stdout: 'dev@sandbox.test\n' });

      // The loopback flow, a small script playing the person at the consent page; the token in the
      // keychain where one answers.
      const ada = info.users.find((u) => u.plan === 'pro-monthly')!;
      const login = await result(['login', '--client-id', info.app.client_id], {
        ...site,
        MKT_CLIENT_SECRET: info.app.client_secret,
        MKT_BROWSER: `"${process.execPath}" "${person}"`,
        APPROVE_AS: ada.id,
        ...(keychain ? {} : { MKT_CREDENTIAL_STORE: 'file' }),
      });
      expect(login.code, login.stderr).toBe(0);
      const status = await result(['auth', 'status', '--json'], site);
      expect(JSON.parse(status.stdout)).toMatchObject({
        kind: 'token',
        source: keychain ? 'keychain' : 'file',
      });
      const entitlements = await result(['entitlements', '--json'], site);
      expect(entitlements.code, entitlements.stderr).toBe(0);
      expect(JSON.parse(entitlements.stdout)).toMatchObject({ user_id: ada.id, plan: 'pro-monthly' });

      // webhooks listen forwards what trigger makes happen, signature checked.
      const listen = mkt(
        ['webhooks', 'listen', '--forward-to', `127.0.0.1:${port}/hook`, '--profile', 'ci'],
        site,
      );
      try {
        for (let i = 0; i < 300 && !/Ready/.test(listen.stderr()); i++)
          await new Promise((r) => setTimeout(r, 50));
        expect(listen.stderr()).toMatch(/Ready/);
        const trigger = await result(['trigger', 'subscription.created', '--profile', 'ci'], site);
        expect(trigger.code, trigger.stderr).toBe(0);
        for (let i = 0; i < 300 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
        expect(received[0]?.headers['x-marketplace-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
        expect(JSON.parse(received[0]!.body)).toMatchObject({ event: 'subscription.created' });
      } finally {
        listen.child.kill('SIGINT');
        await listen.done;
      }
    } finally {
      target.close();
      sandbox.child.kill('SIGINT');
    }
    expect((await sandbox.done).code).toBe(130);
  }, 120_000);
});
