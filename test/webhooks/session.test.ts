// Faults that need the marketplace: a signing secret rotated while listen runs (or before it starts,
// with a stale one stored), and an OAuth access token that expires while listen runs.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { signInEnv, storedToken } from '../auth/helpers.js';
import { runMkt, tempDir } from '../support/cli.js';
import { startTestSandbox } from '../support/sandbox.js';
import { spawnListen, trigger, type ListenProcess, useListenFixture } from './helpers.js';

// Not useSandbox: each test starts its own, with a skewed clock or restarted on the same port.
let sandbox: Sandbox;
let elsewhere: { path: string; remove(): Promise<void> };

beforeEach(async () => {
  elsewhere = await tempDir();
});
afterEach(async () => {
  await sandbox.close();
  await elsewhere.remove();
});
const fx = useListenFixture();

const app = () => sandbox.seed.app.id;
const keyEnv = () => ({ MKT_SITE_URL: sandbox.siteUrl, MKT_API_KEY: sandbox.seed.test_key });
function listen(env: Record<string, string>): ListenProcess {
  const l = spawnListen(
    ['--app', app(), '--forward-to', fx.target.url, '--forward-backoff', '50'],
    fx.dir,
    env,
  );
  fx.running.push(l);
  return l;
}
const ready = (l: ListenProcess) => l.waitFor((lines) => lines.some((x) => x.type === 'ready'));
const send = async (event = 'user.authorized') =>
  (await trigger(sandbox.siteUrl, sandbox.seed.test_key, app(), event)).delivery_id;
const forwarded = (l: ListenProcess, id: string) =>
  l.waitFor((lines) => lines.some((x) => x.type === 'forwarded' && x.id === id));
/** `mkt apps rotate-secret --kind webhook` run from another machine (its own config folder). */
async function rotateElsewhere(): Promise<string> {
  const res = await runMkt(
    ['apps', 'rotate-secret', '--kind', 'webhook', '--app', app(), '--yes'],
    elsewhere.path,
    {
      env: keyEnv(),
    },
  );
  expect(res.code).toBe(0);
  return res.stdout.trim();
}
const credentialsFile = () => join(fx.dir, 'credentials.json');
const storedSecret = async () =>
  (JSON.parse(await readFile(credentialsFile(), 'utf8')) as Record<string, string>)[
    `default:webhook-secret:${app()}`
  ];

describe('webhooks listen and the marketplace session', () => {
  beforeEach(async () => {
    sandbox = await startTestSandbox();
  });

  it('keeps working when the signing secret is rotated while it listens, and after a restart with a stale stored secret', async () => {
    let l = listen(keyEnv());
    await ready(l);
    const before = await send();
    await forwarded(l, before);
    await rotateElsewhere();
    const after = await send('subscription.created');
    await forwarded(l, after);
    l.child.kill('SIGINT');
    await l.exit();
    // The old secret stored here, then rotated elsewhere: listen reads the current one and stores it.
    const stale = await rotateElsewhere();
    await writeFile(credentialsFile(), JSON.stringify({ [`default:webhook-secret:${app()}`]: stale }));
    const current = await rotateElsewhere();
    l = listen(keyEnv());
    await ready(l);
    const later = await send('subscription.cancelled');
    await forwarded(l, later);
    expect(await storedSecret()).toBe(current);
    expect(fx.target.received.map((r) => r.headers['x-marketplace-delivery'])).toEqual([
      before,
      after,
      later,
    ]);
    expect(l.lines.filter((x) => x.type === 'refused')).toEqual([]);
  });

  it('never replaces a secret given explicitly; resend verifies a refused delivery again with the current secret', async () => {
    const l = listen({ ...keyEnv(), MKT_WEBHOOK_SECRET: sandbox.seed.app.webhook_secret });
    await ready(l);
    await rotateElsewhere();
    const id = await send();
    await l.waitFor((lines) => lines.some((x) => x.type === 'refused' && x.id === id));
    expect(fx.target.received).toEqual([]);
    l.child.kill('SIGINT');
    await l.exit();
    // Given the old secret explicitly, resend says it still does not verify (exit 3) and sends nothing.
    const wrong = await runMkt(
      ['webhooks', 'resend', id, '--app', app(), '--forward-to', fx.target.url],
      fx.dir,
      {
        env: { ...keyEnv(), MKT_WEBHOOK_SECRET: sandbox.seed.app.webhook_secret },
      },
    );
    expect(wrong.code).toBe(3);
    expect(fx.target.received).toEqual([]);
    const resent = await runMkt(
      ['webhooks', 'resend', id, '--app', app(), '--forward-to', fx.target.url],
      fx.dir,
      {
        env: keyEnv(),
      },
    );
    expect(resent.stderr).toContain(`Resent ${id}`);
    expect(resent.code).toBe(0);
    expect(fx.target.received.map((r) => r.headers['x-marketplace-delivery'])).toEqual([id]);
  });
});

describe('webhooks listen with an OAuth sign-in', () => {
  let skew = 0;
  const sandboxDir = () => join(fx.dir, 'sandbox');
  beforeEach(async () => {
    skew = 0;
    sandbox = await startTestSandbox({ dataDir: sandboxDir(), now: () => Date.now() + skew });
  });

  const oauthEnv = () => ({
    ...signInEnv(sandbox),
    PERSON_USER: sandbox.seed.developer.id,
  });
  /** Signs in as the developer, starts listen, and forwards one delivery; answers its id. */
  async function signedInListen(env: Record<string, string>): Promise<{ l: ListenProcess; before: string }> {
    const login = await runMkt(
      [
        'login',
        '--client-id',
        sandbox.seed.app.client_id,
        '--scope',
        'identity:read',
        '--scope',
        'apps:write',
      ],
      fx.dir,
      { env: oauthEnv(), timeoutMs: 20_000 },
    );
    expect(login.stderr + login.code).toMatch(/0$/);
    const l = listen(env);
    await ready(l);
    const before = await send();
    await forwarded(l, before);
    return { l, before };
  }
  /** Two hours later on the marketplace's clock: the access token has expired. The stream drops as
   * the marketplace restarts; reconnecting meets a 401. */
  async function expireAndRestart(l: ListenProcess): Promise<void> {
    const { port } = sandbox;
    skew = 2 * 3600_000;
    await sandbox.close();
    await l.waitForStderr((e) => e.includes('"type":"reconnecting"'));
    sandbox = await startTestSandbox({ dataDir: sandboxDir(), port, now: () => Date.now() + skew });
  }

  it('renews an access token that expired while it listened, and reconnects the relay stream', async () => {
    const { l, before } = await signedInListen(oauthEnv());
    const token = (await storedToken(fx.dir))!.access_token;
    await expireAndRestart(l);
    const after = await send('subscription.created');
    await forwarded(l, after);
    expect(l.child.exitCode).toBe(null);
    // It was renewed after the 401 (not before: on this machine's clock it had not expired yet).
    expect((await storedToken(fx.dir))!.access_token).not.toBe(token);
    expect(fx.target.received.map((r) => r.headers['x-marketplace-delivery'])).toEqual([before, after]);
  });

  it('ends (exit 4) with the command that fixes it when the credential cannot be renewed', async () => {
    const { MKT_CLIENT_SECRET: _, ...env } = oauthEnv();
    const { l } = await signedInListen(env);
    // The login kept the client secret it used; without it (and without the variable) no refresh.
    const file = join(fx.dir, 'credentials.json');
    const stored = JSON.parse(await readFile(file, 'utf8')) as Record<string, string>;
    delete stored[`site:${sandbox.siteUrl}:client-secret:${sandbox.seed.app.client_id}`];
    await writeFile(file, JSON.stringify(stored));
    await expireAndRestart(l);
    expect(await l.exit()).toEqual({ code: 4, signal: null });
    // With --json the error is the last document on stdout (some of its lines parse on their own).
    const out = l.lines
      .map((x) => (typeof x === 'object' && x.type === 'not_json' ? x.text : JSON.stringify(x)))
      .join('\n');
    expect(out).toContain('"code": "relay_refused"');
    expect(out).toContain('"mkt login"');
  });
});
