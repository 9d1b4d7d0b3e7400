import { execFile } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { beforeEach, describe, expect, it } from 'vitest';
import { baseEnv, runMkt, startMkt } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';
import { approveElsewhere, AUTHORIZE_URL, readLog, storedSecrets, storedToken } from './helpers.js';

// Without --no-browser, `mkt login` itself notices that no browser can be opened here (Linux
// without a display, or an SSH session) and asks for the pasted redirect address or code instead.

/** The xdg-open that `open` (mkt's OS opener) runs on Linux. */
const XDG_OPEN = join(dirname(createRequire(import.meta.url).resolve('open')), 'xdg-open');
/** What xdg-open tries, with and without a display, when it finds no desktop: each one logs its call. */
const OPENERS = ['www-browser', 'x-www-browser', 'sensible-browser', 'xdg-open', 'lynx', 'w3m'];

const ctx = useSandbox({ dirPerTest: true });
let env: Record<string, string | undefined>;
let openerLog: string;
beforeEach(async () => {
  openerLog = join(ctx.dir, 'opener.log');
  const bin = join(ctx.dir, 'bin');
  await mkdir(bin);
  for (const name of OPENERS) {
    await writeFile(join(bin, name), `#!/bin/sh\necho "${name} $*" >> "${openerLog}"\n`);
    await chmod(join(bin, name), 0o755);
  }
  env = {
    MKT_SITE_URL: ctx.sandbox.siteUrl,
    MKT_CLIENT_SECRET: ctx.sandbox.seed.app.client_secret,
    PATH: `${bin}:${process.env.PATH}`,
    // A generic desktop, so xdg-open would go straight to the openers above, whatever this machine runs.
    XDG_CURRENT_DESKTOP: 'X-Generic',
    // Neither a display nor SSH unless the test says so; no browser command (runMkt drops BROWSER).
    DISPLAY: undefined,
    WAYLAND_DISPLAY: undefined,
    SSH_CONNECTION: undefined,
    SSH_CLIENT: undefined,
    SSH_TTY: undefined,
  };
});

/** Runs a headless `mkt login`, approves on "another machine", and pastes what `paste` makes of the redirect. */
async function loginByPasting(
  extraEnv: Record<string, string | undefined>,
  paste: (redirect: URL) => string,
) {
  const ada = ctx.sandbox.seed.users[0]!;
  const mkt = startMkt(['login', '--client-id', ctx.sandbox.seed.app.client_id], ctx.dir, {
    env: { ...env, ...extraEnv },
    timeoutMs: 20_000,
  });
  const [, url] = await mkt.waitForStderr(AUTHORIZE_URL);
  await mkt.waitForStderr(/press Enter/);
  const redirect = new URL((await approveElsewhere(url!, { PERSON_USER: ada.id })).trim());
  expect(redirect.href).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback\?code=/);
  mkt.child.stdin.write(`${paste(redirect)}\n`);
  const { code } = await mkt.exit();
  const stderr = mkt.stderr();
  expect(code, stderr).toBe(0);
  expect(stderr).toContain('Open this URL in a browser on any machine');
  expect(stderr).not.toContain('in your browser');
  expect(stderr).not.toContain('Could not open a browser');
  expect(stderr).toContain(`✓ Logged in as ${ada.name} <${ada.email}> (${ada.id})`);
  expect(await readLog(openerLog)).toEqual([]);

  const status = await runMkt(['auth', 'status', '--json'], ctx.dir, { env: { ...env, ...extraEnv } });
  expect(status.code, status.stderr).toBe(0);
  expect(JSON.parse(status.stdout)).toMatchObject({
    site_url: ctx.sandbox.siteUrl,
    profile: 'default',
    kind: 'token',
    live: false,
    source: 'file',
    user: { id: ada.id, email: ada.email },
    client_id: ctx.sandbox.seed.app.client_id,
    scopes: ['identity:read', 'entitlements:read'],
  });
  expect((await storedToken(ctx.dir))?.user).toMatchObject({ id: ada.id });
}

describe('mkt login where no browser can be opened', () => {
  it('the openers stand-ins catch what the OS opener would run here', async () => {
    // Without this, "the log stayed empty" would prove nothing.
    const clean = { ...baseEnv(ctx.dir), ...env } as Record<string, string>;
    for (const k of Object.keys(clean)) if (clean[k] === undefined) delete clean[k];
    await promisify(execFile)('sh', [XDG_OPEN, 'http://127.0.0.1:9/probe'], { env: clean });
    expect(await readLog(openerLog)).toEqual(['www-browser http://127.0.0.1:9/probe']);
  });

  it.runIf(process.platform === 'linux')(
    'on Linux without DISPLAY or WAYLAND_DISPLAY: prints the URL and takes the pasted redirect address',
    async () => {
      await loginByPasting({}, (redirect) => redirect.href);
    },
  );

  it('over SSH, even with a (forwarded) display: prints the URL and takes the pasted code alone', async () => {
    await loginByPasting(
      { SSH_CONNECTION: '203.0.113.7 52144 192.0.2.10 22', DISPLAY: 'localhost:10.0' },
      (redirect) => redirect.searchParams.get('code')!,
    );
  });

  it('a pasted line that is neither an address nor a code is asked for again', async () => {
    const mkt = startMkt(['login', '--client-id', ctx.sandbox.seed.app.client_id], ctx.dir, {
      env,
      timeoutMs: 20_000,
    });
    const [, url] = await mkt.waitForStderr(AUTHORIZE_URL);
    mkt.child.stdin.write('not a code!\n');
    await mkt.waitForStderr(/paste it again/);
    const redirect = await approveElsewhere(url!);
    mkt.child.stdin.write(redirect);
    expect((await mkt.exit()).code, mkt.stderr()).toBe(0);
    expect(Object.keys(await storedSecrets(ctx.dir))).toContain('default:oauth');
  });

  it('with stdin closed, says it waits only for the browser redirect, and takes it', async () => {
    const mkt = startMkt(['login', '--client-id', ctx.sandbox.seed.app.client_id], ctx.dir, {
      env,
      timeoutMs: 20_000,
    });
    const [, url] = await mkt.waitForStderr(AUTHORIZE_URL);
    mkt.child.stdin.end();
    await mkt.waitForStderr(/stdin is closed\); waiting only for the browser redirect/);
    // The person's browser runs on this machine after all: the redirect reaches the listener.
    const redirect = (await approveElsewhere(url!)).trim();
    expect((await fetch(redirect)).status).toBe(200);
    expect((await mkt.exit()).code, mkt.stderr()).toBe(0);
    expect(Object.keys(await storedSecrets(ctx.dir))).toContain('default:oauth');
  });

  it.runIf(process.platform === 'linux')(
    'the OS opener (with a display) runs without the four secrets in its environment',
    async () => {
      const dump = join(ctx.dir, 'opener-env.txt');
      for (const name of OPENERS) await writeFile(join(ctx.dir, 'bin', name), `#!/bin/sh\nenv > "${dump}"\n`);
      const mkt = startMkt(
        ['login', '--client-id', ctx.sandbox.seed.app.client_id, '--timeout', '3'],
        ctx.dir,
        {
          timeoutMs: 20_000,
          env: {
            ...env,
            DISPLAY: ':99',
            // No desktop files: xdg-open falls back to x-www-browser (a stand-in) rather than a real browser.
            ...Object.fromEntries(
              ['XDG_DATA_DIRS', 'XDG_DATA_HOME', 'XDG_CONFIG_DIRS', 'XDG_CONFIG_HOME'].map((k) => [
                k,
                ctx.dir,
              ]),
            ),
            MKT_API_KEY: 'test_envKeyNeverInherited',
            MKT_ACCESS_TOKEN: 'at_envTokenNeverInherited',
            MKT_WEBHOOK_SECRET: 'whsec_envNeverInherited',
          },
        },
      );
      await mkt.waitForStderr(/in your browser/);
      await mkt.exit();
      const seen = (await readLog(dump, /^PATH=/)).join('\n');
      expect(seen).toMatch(/^PATH=/m);
      expect(seen).not.toMatch(
        /MKT_CLIENT_SECRET|MKT_API_KEY|MKT_ACCESS_TOKEN|MKT_WEBHOOK_SECRET|NeverInherited/,
      );
      expect(seen).not.toContain(ctx.sandbox.seed.app.client_secret);
    },
  );
});
