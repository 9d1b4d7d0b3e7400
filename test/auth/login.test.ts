import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runMkt, startMkt } from '../support/cli.js';
import { json, startServer } from '../support/server.js';
import { developerToken, useSandbox } from '../support/sandbox.js';
import {
  approveElsewhere,
  AUTHORIZE_URL,
  readLog,
  signInEnv,
  storedSecrets,
  storedToken,
} from './helpers.js';

const ctx = useSandbox({ dirPerTest: true });
let env: Record<string, string>;
beforeEach(async () => {
  env = {
    ...signInEnv(ctx.sandbox),
    PERSON_LOG: join(ctx.dir, 'person.log'),
  };
});

const login = (args: string[] = [], extra: Record<string, string> = {}) =>
  runMkt(['login', '--client-id', ctx.sandbox.seed.app.client_id, ...args], ctx.dir, {
    env: { ...env, ...extra },
    timeoutMs: 20_000,
  });

describe('mkt login (browser flow)', () => {
  it('signs in through the consent page, stores the token set, and identifies the user', async () => {
    const ada = ctx.sandbox.seed.users[0]!;
    const res = await login([], { PERSON_USER: ada.id });
    expect(res.stderr).toContain(
      `✓ Logged in as ${ada.name} <${ada.email}> (${ada.id}) on ${ctx.sandbox.siteUrl}`,
    );
    expect(res.stderr).toContain(`${ctx.sandbox.siteUrl}/oauth/authorize?`);
    expect(res.code).toBe(0);
    expect(res.stdout).toBe('');
    // The favicon request got a 404 and did not end the flow; the person saw the success page.
    expect(await readLog(env.PERSON_LOG!, /^callback /)).toEqual([
      'consent 200',
      'decision 302',
      'favicon 404',
      'callback 200 signed-in',
    ]);

    const token = await storedToken(ctx.dir);
    expect(token).toMatchObject({
      token_type: 'Bearer',
      scope: 'identity:read entitlements:read',
      client_id: ctx.sandbox.seed.app.client_id,
      site_url: ctx.sandbox.siteUrl,
      user: { id: ada.id, email: ada.email, name: ada.name },
    });
    expect(String(token!.access_token)).toMatch(/^at_/);
    expect(String(token!.refresh_token)).toMatch(/^rt_/);
    expect(Number(token!.expires_at)).toBeGreaterThan(Date.now() + 3000_000);
    const config = JSON.parse(await readFile(join(ctx.dir, 'config.json'), 'utf8'));
    expect(config.profiles.default['client-id']).toBe(ctx.sandbox.seed.app.client_id);
    expect(JSON.stringify(config)).not.toContain(String(token!.access_token));

    const who = await runMkt(['whoami', '--json'], ctx.dir, { env });
    expect(who.code).toBe(0);
    expect(JSON.parse(who.stdout)).toMatchObject({ id: ada.id, email: ada.email, name: ada.name });

    const status = await runMkt(['auth', 'status', '--json'], ctx.dir, { env });
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      site_url: ctx.sandbox.siteUrl,
      profile: 'default',
      kind: 'token',
      live: false,
      source: 'file',
      user: { id: ada.id },
      scopes: ['identity:read', 'entitlements:read'],
    });

    const ent = await runMkt(['entitlements', '--json'], ctx.dir, { env });
    expect(ent.code).toBe(0);
    expect(JSON.parse(ent.stdout)).toMatchObject({
      user_id: ada.id,
      app_id: ctx.sandbox.seed.app.id,
      status: 'active',
    });

    const out = await runMkt(['logout'], ctx.dir, { env });
    expect(out.code).toBe(0);
    expect(out.stderr).toContain('Logged out of profile "default"');
    expect(await storedToken(ctx.dir)).toBeUndefined();
    const after = await runMkt(['auth', 'status'], ctx.dir, { env });
    expect(after.code).toBe(4);
    expect(after.stderr).toContain('Not signed in');
    expect(after.stderr).toContain('Try: mkt login');
  });

  it('refuses a callback whose state was forged, keeps waiting for the real one, and stores nothing', async () => {
    const res = await login(['--timeout', '2'], { PERSON_STATE: 'forged-state-value' });
    expect(await readLog(env.PERSON_LOG!, /^callback /)).toContain('callback 400 failed');
    expect(res.stderr).toContain('Nobody finished the sign-in within 2 s');
    expect(res.code).toBe(4);
    expect(await storedSecrets(ctx.dir)).toEqual({});
  });

  it('survives noise on the loopback listener: a wrong state, a POST, a foreign Host or localhost (421)', async () => {
    const ada = ctx.sandbox.seed.users[0]!;
    const res = await login([], { PERSON_USER: ada.id, PERSON_NOISE: '1' });
    expect(await readLog(env.PERSON_LOG!, /^callback /)).toEqual([
      'consent 200',
      'decision 302',
      'favicon 404',
      'stray-state 400',
      'stray-post 404',
      'foreign-host 421',
      'localhost-host 421',
      'callback 200 signed-in',
    ]);
    expect(res.stderr).toContain(`✓ Logged in as ${ada.name}`);
    expect(res.code).toBe(0);
  });

  it('reports a denied consent clearly (exit 4) and stores nothing', async () => {
    const res = await login([], { PERSON_DECISION: 'deny' });
    expect(res.code).toBe(4);
    expect(res.stderr).toContain('The sign-in was denied in the browser');
    expect(res.stderr).toContain('Try: mkt login');
    expect(await storedSecrets(ctx.dir)).toEqual({});
  });

  it('gives up after --timeout when nobody finishes the sign-in', async () => {
    const started = Date.now();
    const res = await login(['--timeout', '0.5'], { MKT_BROWSER: `"${process.execPath}" -e ""` });
    expect(res.code).toBe(4);
    expect(res.stderr).toContain('Nobody finished the sign-in within 0.5 s');
    expect(res.stderr).toContain('Try: mkt login --no-browser');
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(await storedSecrets(ctx.dir)).toEqual({});
  });

  it('says exactly which redirect URI to register when the app does not accept the loopback one', async () => {
    const created = await fetch(`${ctx.sandbox.siteUrl}/api/v1/apps`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${await developerToken(ctx.sandbox, ['apps:write'])}`,
      },
      body: JSON.stringify({ name: 'Web Only', redirect_uris: ['https://example.com/callback'] }),
    });
    const app = (await created.json()) as { client_id: string; client_secret: string };
    const res = await runMkt(['login', '--client-id', app.client_id, '--port', '0'], ctx.dir, {
      env: { ...env, MKT_CLIENT_SECRET: app.client_secret },
      timeoutMs: 20_000,
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/does not accept the redirect URI http:\/\/127\.0\.0\.1:\d+\/callback/);
    expect(res.stderr).toContain('Register http://127.0.0.1/callback');
    // Nothing was opened: the problem is found before the browser.
    expect(await readLog(env.PERSON_LOG!)).toEqual([]);
  });

  it('asks for a client id when neither the flag nor the profile has one (exit 2)', async () => {
    const res = await runMkt(['login'], ctx.dir, { env });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      `Try: mkt login --client-id ${ctx.sandbox.seed.app.client_id} --scope apps:write\n`,
    );
  });

  it('refuses an unknown client id before opening the browser (exit 2)', async () => {
    const res = await runMkt(['login', '--client-id', 'cid_nosuchclient'], ctx.dir, {
      env,
      timeoutMs: 20_000,
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      `${ctx.sandbox.siteUrl} (from MKT_SITE_URL) does not know the client id "cid_nosuchclient" (from --client-id)`,
    );
    expect(await readLog(env.PERSON_LOG!)).toEqual([]);
  });

  it('without a terminal, names MKT_CLIENT_SECRET when no client secret is known (exit 2)', async () => {
    const res = await login([], { MKT_CLIENT_SECRET: undefined as unknown as string });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('MKT_CLIENT_SECRET');
    expect(await readLog(env.PERSON_LOG!)).toEqual([]);
  });

  it('never prints secrets in --verbose output', async () => {
    const res = await login(['--verbose']);
    expect(res.code).toBe(0);
    const who = await runMkt(['whoami', '--verbose'], ctx.dir, { env });
    expect(who.code).toBe(0);
    const token = await storedToken(ctx.dir);
    const all = res.stdout + res.stderr + who.stdout + who.stderr;
    expect(all).toContain('POST'); // the verbose log is really there
    for (const secret of [ctx.sandbox.seed.app.client_secret, token!.access_token, token!.refresh_token]) {
      expect(all).not.toContain(String(secret));
    }
    expect(all).not.toMatch(/code_[0-9a-f]{40}/); // sandbox authorization codes
  });
});

describe('mkt login --no-browser (headless)', () => {
  it('accepts the pasted redirect address on stdin', async () => {
    const mkt = startMkt(['login', '--no-browser', '--client-id', ctx.sandbox.seed.app.client_id], ctx.dir, {
      env: { ...env, MKT_BROWSER: '' },
      timeoutMs: 20_000,
    });
    const [, url] = await mkt.waitForStderr(AUTHORIZE_URL);
    // The person approves on "another machine"; the redirect never reaches the listener.
    const redirect = await approveElsewhere(url!);
    expect(redirect).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback\?code=/);
    mkt.child.stdin.write(redirect);
    const { code } = await mkt.exit();
    expect(mkt.stderr()).toContain('Then paste the address');
    expect(code).toBe(0);
    expect(mkt.stderr()).toContain('✓ Logged in as');
    expect((await storedToken(ctx.dir))?.user).toBeTruthy();
  });

  it('refuses a pasted address with a forged state', async () => {
    const mkt = startMkt(['login', '--no-browser', '--client-id', ctx.sandbox.seed.app.client_id], ctx.dir, {
      env: { ...env, MKT_BROWSER: '' },
      timeoutMs: 20_000,
    });
    mkt.child.stdin.write(`http://127.0.0.1:1/callback?code=code_x&state=not-ours\n`);
    const { code } = await mkt.exit();
    expect(code).toBe(4);
    expect(mkt.stderr()).toContain('state does not match');
    expect(await storedSecrets(ctx.dir)).toEqual({});
  });
});

describe('scopes', () => {
  it('--scope adds to the default scopes; a 403 names the missing scope, and its hint run as printed fixes it', async () => {
    const dev = ctx.sandbox.seed.developer;
    expect((await login([], { PERSON_USER: dev.id })).code).toBe(0);
    const denied = await runMkt(['api', 'POST', '/apps', '--field', 'name=Second'], ctx.dir, { env });
    expect(denied.code).toBe(4);
    expect(denied.stderr).toContain('lacks the "apps:write" scope');
    const hint = /Try: (mkt login --scope apps:write)\b/.exec(denied.stderr);
    expect(hint).not.toBeNull();

    const again = await runMkt(hint![1]!.split(' ').slice(1), ctx.dir, {
      env: { ...env, PERSON_USER: dev.id },
      timeoutMs: 20_000,
    });
    expect(again.stderr + again.code).toMatch(/0$/);
    expect(
      String((await storedToken(ctx.dir))?.scope)
        .split(' ')
        .sort(),
    ).toEqual(['apps:write', 'entitlements:read', 'identity:read']);
    expect((await runMkt(['whoami'], ctx.dir, { env })).code).toBe(0);
    const created = await runMkt(['api', 'POST', '/apps', '--field', 'name=Second'], ctx.dir, { env });
    expect(created.code).toBe(0);
    const second = JSON.parse(created.stdout) as { id: string };

    // Not a scope matter: an API key of another app. Says whose app it is and where to look, not scopes.
    const other = await runMkt(['api', 'GET', `/apps/${second.id}`], ctx.dir, {
      env: { ...env, MKT_API_KEY: ctx.sandbox.seed.test_key },
    });
    expect(other.code).toBe(4);
    // One sentence (the server's), and a hint a key can use: its own app.
    expect(other.stderr).toContain(
      `belongs to another app (${ctx.sandbox.seed.app.id}), not to ${second.id}.`,
    );
    expect(other.stderr).not.toContain('is not the app of this API key');
    expect(other.stderr).toContain('Try: mkt apps get   (the app of this API key)');
    expect(other.stderr).not.toContain('--scope');
  });
});

describe('mkt login usage', () => {
  it('does not present its flags as excluding each other; --with-api-key with a browser flag is a usage error', async () => {
    const help = await runMkt(['login', '--help'], ctx.dir, { env });
    const usage = help.stdout.slice(help.stdout.indexOf('USAGE'), help.stdout.indexOf('FLAGS'));
    expect(usage).not.toContain('|');
    expect(help.stdout).toContain('login --client-id cid_');
    const both = await runMkt(['login', '--with-api-key', '--port', '8085'], ctx.dir, {
      env,
      input: 'test_x\n',
    });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--port applies only to the browser sign-in');
  });
});

describe('mkt login --with-api-key', () => {
  it('stores a test key read from stdin and reports it', async () => {
    const res = await runMkt(['login', '--with-api-key'], ctx.dir, {
      env,
      input: `${ctx.sandbox.seed.test_key}\n`,
    });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(`Logged in as ${ctx.sandbox.seed.developer.name}`);
    expect(res.stderr).toContain('with a test key');
    expect(JSON.parse((await storedSecrets(ctx.dir))['default:api-key']!)).toEqual({
      key: ctx.sandbox.seed.test_key,
      site_url: ctx.sandbox.siteUrl,
      user: {
        id: ctx.sandbox.seed.developer.id,
        email: ctx.sandbox.seed.developer.email,
        name: ctx.sandbox.seed.developer.name,
      },
      app: ctx.sandbox.seed.app.id,
    });
    // The key's app, stored with it, saves every later command its `GET /apps`.
    const plans = await runMkt(['plans', 'list', '--json', '--verbose'], ctx.dir, { env });
    expect(plans.code).toBe(0);
    expect(plans.stderr.match(/^> GET .*/gm)).toEqual([
      expect.stringContaining(`/api/v1/apps/${ctx.sandbox.seed.app.id}/plans?`),
    ]);
    const status = await runMkt(['auth', 'status'], ctx.dir, { env });
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/Credential:\s+test API key/);
    expect(status.stdout).toMatch(
      /Source:\s+file .*credentials\.json \(chosen with MKT_CREDENTIAL_STORE=file\)/,
    );
    expect(status.stdout).not.toContain(ctx.sandbox.seed.test_key);
    const token = await runMkt(['auth', 'token'], ctx.dir, { env });
    expect(token.code).toBe(4);
    expect(token.stderr).toContain('access tokens come from `mkt login`');
  });

  it('never sends a stored key to another site, and says which site it belongs to', async () => {
    const stored = await runMkt(['login', '--with-api-key'], ctx.dir, {
      env,
      input: `${ctx.sandbox.seed.test_key}\n`,
    });
    expect(stored.code).toBe(0);
    const other = await startServer((_req, res) => json(res, 200, { id: 'usr_other' }));
    try {
      for (const run of [
        () => runMkt(['whoami', '--site-url', other.url], ctx.dir, { env }),
        () => runMkt(['whoami'], ctx.dir, { env: { ...env, MKT_SITE_URL: other.url } }),
      ]) {
        const res = await run();
        expect(res.code).toBe(4);
        expect(res.stderr).toContain(`Its sign-in belongs to ${ctx.sandbox.siteUrl}`);
        expect(res.stderr).toMatch(
          /Try: mkt login --client-id cid_…( --site-url \S+)? {3}\(your app's client id\)\n/,
        );
      }
      expect(other.seen.filter((s) => s.headers['x-api-key'] !== undefined)).toEqual([]);
      expect(other.seen.filter((s) => s.headers.authorization !== undefined)).toEqual([]);
    } finally {
      await other.close();
    }
    // At its own site the key still works.
    expect((await runMkt(['whoami'], ctx.dir, { env })).code).toBe(0);
  });

  it('refuses something that is not a key (exit 2) and a key the site does not know (exit 4)', async () => {
    const bad = await runMkt(['login', '--with-api-key'], ctx.dir, { env, input: 'sk_nonsense\n' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('keys begin with test_ or live_');
    const unknown = await runMkt(['login', '--with-api-key'], ctx.dir, {
      env,
      input: 'test_unknownkey123\n',
    });
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain('refused this API key');
    expect(await storedSecrets(ctx.dir)).toEqual({});
  });

  it('marks a live key in every status, and replaces a stored OAuth token', async () => {
    expect((await login()).code).toBe(0);
    const res = await runMkt(['login', '--with-api-key'], ctx.dir, { env, input: ctx.sandbox.seed.live_key });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('with a LIVE key');
    expect(await storedToken(ctx.dir)).toBeUndefined();
    const text = await runMkt(['auth', 'status'], ctx.dir, { env });
    expect(text.stdout).toMatch(/Credential:\s+LIVE API key/);
    const json = await runMkt(['auth', 'status', '--json'], ctx.dir, { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ kind: 'live_key', live: true, source: 'file' });
  });

  it('logout --all forgets every profile but keeps app client secrets; env credentials are reported as such', async () => {
    const key = ctx.sandbox.seed.test_key;
    for (const profile of ['one', 'two'])
      expect(
        (await runMkt(['login', '--with-api-key', '--profile', profile], ctx.dir, { env, input: key })).code,
      ).toBe(0);
    const file = join(ctx.dir, 'credentials.json');
    const secrets = await storedSecrets(ctx.dir);
    secrets['one:client-secret:cid_x'] = 'cs_keepme';
    await writeFile(file, JSON.stringify(secrets));
    const out = await runMkt(['logout', '--all'], ctx.dir, { env });
    expect(out.code).toBe(0);
    expect(out.stderr).toContain('Logged out of profile "one"');
    expect(out.stderr).toContain('Logged out of profile "two"');
    expect(await storedSecrets(ctx.dir)).toEqual({ 'one:client-secret:cid_x': 'cs_keepme' });
    const fromEnv = await runMkt(['auth', 'status', '--json'], ctx.dir, {
      env: { ...env, MKT_API_KEY: key },
    });
    expect(JSON.parse(fromEnv.stdout)).toMatchObject({ kind: 'test_key', source: 'env' });
  });
});
