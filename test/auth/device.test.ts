import { afterEach, describe, expect, it } from 'vitest';
import { runMkt, startMkt, type RunningMkt } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';
import { storedSecrets, storedToken } from './helpers.js';
import { DEVICE_PROMPT, fastClock, hiddenField, USER_CODE } from './device-helpers.js';

// `mkt login --device` (RFC 8628) against the sandbox, as a person over SSH does it: mkt shows an
// address and a code, the person approves on another device, mkt polls until the answer. mkt runs
// under libfaketime ten times faster than real time, and the sandbox's clock runs at 11x (so mkt's
// polls, 5 s apart for it, are 5.5 s apart for the sandbox); the test moves it on for expiry.

const SPEED = 11;
const origin = Date.now();
let jump = 0;
const ctx = useSandbox({ dirPerTest: true, now: () => origin + (Date.now() - origin) * SPEED + jump });
const running: RunningMkt[] = [];
afterEach(() => {
  for (const m of running.splice(0)) m.child.kill('SIGKILL');
});

const env = (extra: Record<string, string | undefined> = {}) => ({
  MKT_SITE_URL: ctx.sandbox.siteUrl,
  MKT_CLIENT_SECRET: ctx.sandbox.seed.app.client_secret,
  ...fastClock(10),
  ...extra,
});

function deviceLogin(
  args: string[] = ['--device'],
  extra: Record<string, string | undefined> = {},
  stdinNull = false,
) {
  const mkt = startMkt(['login', '--client-id', ctx.sandbox.seed.app.client_id, ...args], ctx.dir, {
    env: env(extra),
    timeoutMs: 60_000,
    stdinNull,
  });
  running.push(mkt);
  return mkt;
}

/** The person on another device: opens the address mkt printed and answers the page. */
async function answer(url: string, decision: 'approve' | 'deny', userId?: string) {
  const pageRes = await fetch(url);
  expect(pageRes.status).toBe(200);
  const html = await pageRes.text();
  const form: Record<string, string> = {
    user_code: hiddenField(html, 'user_code'),
    csrf_token: hiddenField(html, 'csrf_token'),
    decision,
  };
  if (userId) form.user_id = userId;
  const res = await fetch(new URL('/oauth/device', url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(url).origin },
    body: new URLSearchParams(form),
  });
  return { status: res.status, html: await res.text(), page: html };
}

describe('mkt login --device against the sandbox', () => {
  it('shows the address and the code, and signs in once the person approves on another device', async () => {
    const ada = ctx.sandbox.seed.users[0]!;
    const mkt = deviceLogin();
    const [, url] = await mkt.waitForStderr(DEVICE_PROMPT);
    const [, code] = await mkt.waitForStderr(USER_CODE);
    expect(code).toMatch(/^[B-DF-HJ-NP-TV-XZ]{4}-[B-DF-HJ-NP-TV-XZ]{4}$/);
    expect(mkt.stderr()).toContain(`open ${ctx.sandbox.siteUrl}/oauth/device on any device`);
    const answered = await answer(url!, 'approve', ada.id);
    expect(answered.page).toContain(code);
    expect(answered.html).toContain('Device signed in');
    expect((await mkt.exit()).code, mkt.stderr()).toBe(0);
    expect(mkt.stderr()).toContain(`✓ Logged in as ${ada.name} <${ada.email}> (${ada.id})`);
    expect((await storedToken(ctx.dir))?.user).toMatchObject({ id: ada.id });
    const who = await runMkt(['whoami', '--json'], ctx.dir, { env: { MKT_SITE_URL: ctx.sandbox.siteUrl } });
    expect(JSON.parse(who.stdout)).toMatchObject({ id: ada.id });
    // The code is spent: the page no longer knows it.
    expect(await (await fetch(url!)).text()).toContain('This code is unknown, already used or expired');
  });

  it('is what `mkt login` chooses by itself over SSH with nothing to paste into', async () => {
    const mkt = deviceLogin(
      [],
      { SSH_CONNECTION: '203.0.113.7 52144 192.0.2.10 22', DISPLAY: undefined },
      true,
    );
    const [, url] = await mkt.waitForStderr(DEVICE_PROMPT);
    expect(mkt.stderr()).toContain('No browser here and no terminal to paste into');
    await answer(url!, 'approve', ctx.sandbox.seed.users[0]!.id);
    expect((await mkt.exit()).code, mkt.stderr()).toBe(0);
    expect(mkt.stderr()).not.toContain('press Enter');
  });

  it('a denial ends the sign-in (exit 4) and stores nothing', async () => {
    const mkt = deviceLogin();
    const [, url] = await mkt.waitForStderr(DEVICE_PROMPT);
    expect((await answer(url!, 'deny')).html).toContain('Sign-in denied');
    expect((await mkt.exit()).code).toBe(4);
    expect(mkt.stderr()).toContain('The sign-in was denied on the verification page; nothing was stored.');
    expect(mkt.stderr()).toContain('Try: mkt login --device');
    expect(Object.keys(await storedSecrets(ctx.dir)).filter((k) => k.endsWith(':oauth'))).toEqual([]);
  });

  it('a code nobody enters expires (expired_token): exit 4, and the page no longer takes it', async () => {
    const mkt = deviceLogin();
    const [, url] = await mkt.waitForStderr(DEVICE_PROMPT);
    jump += 601_000; // the sandbox's clock moves past the code's ten minutes
    expect((await mkt.exit()).code).toBe(4);
    expect(mkt.stderr()).toContain('Nobody entered the code in time');
    expect(await (await fetch(url!)).text()).toContain('This code is unknown, already used or expired');
  });

  it('polling too fast is answered slow_down, and mkt adds 5 s to its interval each time', async () => {
    // mkt's clock at 40x: its polls, 5 s apart for it, come 1.4 s apart for the sandbox.
    // --timeout 600 (mkt's seconds): at 40x its own limit would be 7.5 s of real time.
    const mkt = deviceLogin(['--device', '--timeout', '600'], fastClock(40));
    const [, url] = await mkt.waitForStderr(DEVICE_PROMPT);
    await mkt.waitForStderr(/ask less often: every 10 s now/);
    await mkt.waitForStderr(/ask less often: every 15 s now/);
    await answer(url!, 'approve', ctx.sandbox.seed.users[0]!.id);
    expect((await mkt.exit()).code, mkt.stderr()).toBe(0);
  });
});

describe('the verification page', () => {
  it('keeps the consent rules: Host rule, anti-CSRF token, same-origin form, escaped input', async () => {
    const site = ctx.sandbox.siteUrl;
    const { request } = await import('node:http');
    const port = new URL(site).port;
    const status = await new Promise<number>((resolve, reject) =>
      request(`${site}/oauth/device`, { headers: { host: `rebind.example:${port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      })
        .on('error', reject)
        .end(),
    );
    expect(status).toBe(421);

    const hostile = await fetch(
      `${site}/oauth/device?user_code=${encodeURIComponent('"><script>alert(1)</script>')}`,
    );
    const text = await hostile.text();
    expect(text).not.toContain('<script>alert(1)');
    expect(text).toContain('&lt;script&gt;');

    const mkt = deviceLogin();
    const [, url] = await mkt.waitForStderr(DEVICE_PROMPT);
    const html = await (await fetch(url!)).text();
    const form = {
      user_code: hiddenField(html, 'user_code'),
      decision: 'approve',
      user_id: ctx.sandbox.seed.users[0]!.id,
    };
    const post = (body: Record<string, string>, origin: string) =>
      fetch(`${site}/oauth/device`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
        body: new URLSearchParams(body),
      });
    expect((await post(form, site)).status).toBe(403); // no anti-CSRF token
    expect(
      (await post({ ...form, csrf_token: hiddenField(html, 'csrf_token') }, 'https://evil.example')).status,
    ).toBe(403);
    // Neither spent the code: the person still can approve it.
    expect((await answer(url!, 'approve', ctx.sandbox.seed.users[0]!.id)).status).toBe(200);
    expect((await mkt.exit()).code, mkt.stderr()).toBe(0);
  });
});

describe('mkt login --device elsewhere', () => {
  it('says when the server offers no device sign-in, and --device with --port is a usage error', async () => {
    const { startServer } = await import('../support/server.js');
    const bare = await startServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":{"code":"not_found","message":"nothing"}}');
    });
    try {
      const res = await runMkt(['login', '--device', '--client-id', 'cid_x'], ctx.dir, {
        env: { MKT_SITE_URL: bare.url, MKT_CLIENT_SECRET: 'cs_x' },
      });
      expect(res.code).toBe(2);
      expect(res.stderr).toContain('does not offer device sign-in');
    } finally {
      await bare.close();
    }
    const clash = await runMkt(['login', '--device', '--port', '8085'], ctx.dir, { env: env() });
    expect(clash.code).toBe(2);
    expect(clash.stderr).toContain('--port applies only to the browser sign-in');
  });
});
