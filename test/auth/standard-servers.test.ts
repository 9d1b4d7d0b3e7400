import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMkt, tempDir } from '../support/cli.js';
import { browserCommand, storedToken } from './helpers.js';
import {
  ENTITLEMENT,
  type OAuthServer,
  startOAuth2Server,
  startOidcProvider,
  USER_ID,
} from './oauth-servers.js';

// `mkt login`, `whoami`, `entitlements` and a refresh against authorization servers nobody here
// wrote (docs/DECISIONS.md §4): they take only form-encoded token requests, one wants HTTP Basic.

const BROWSER = browserCommand(fileURLToPath(new URL('../fixtures/auth/cookie-browser.js', import.meta.url)));
const FORM = 'application/x-www-form-urlencoded';

let dir: { path: string; remove(): Promise<void> };
let server: OAuthServer | undefined;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await dir.remove();
});

const mkt = (args: string[], extra: Record<string, string> = {}) =>
  runMkt(args, dir.path, {
    env: {
      MKT_SITE_URL: server!.siteUrl,
      MKT_CLIENT_SECRET: server!.clientSecret,
      MKT_BROWSER: BROWSER,
      ...extra,
    },
    timeoutMs: 30_000,
  });

/** Makes the stored token expired a moment ago, keeping its lifetime. */
async function expireStoredToken(lifetimeMs: number): Promise<Record<string, unknown>> {
  const file = join(dir.path, 'credentials.json');
  const all = JSON.parse(await readFile(file, 'utf8')) as Record<string, string>;
  const token = JSON.parse(all['default:oauth']!) as Record<string, unknown>;
  token.expires_at = Date.now() - 1000;
  token.issued_at = Date.now() - 1000 - lifetimeMs;
  all['default:oauth'] = JSON.stringify(token);
  await writeFile(file, JSON.stringify(all));
  return token;
}

/** Login, whoami, entitlements (and --feature) and one refresh against `server`. */
async function signInAndUse(): Promise<void> {
  const login = await mkt(['login', '--client-id', server!.clientId]);
  expect(login.stderr).toContain(`✓ Logged in as Stan <std@example.com> (${USER_ID}) on ${server!.siteUrl}`);
  expect(login.code).toBe(0);
  expect(server!.granted.authorization_code).toBe(1);
  expect((await storedToken(dir.path))?.scope).toContain('identity:read');

  const who = await mkt(['whoami', '--json']);
  expect(who.code).toBe(0);
  expect(JSON.parse(who.stdout)).toMatchObject({ id: USER_ID });
  const ent = await mkt(['entitlements', '--json']);
  expect(ent.code).toBe(0);
  expect(JSON.parse(ent.stdout)).toEqual(ENTITLEMENT);
  expect((await mkt(['entitlements', '--feature', 'export'])).code).toBe(0);
  expect((await mkt(['entitlements', '--feature', 'import'])).code).toBe(3);

  const old = await expireStoredToken(3_600_000);
  const refreshed = await mkt(['whoami']);
  expect(refreshed.stderr + refreshed.code).toMatch(/0$/);
  expect(server!.granted.refresh_token).toBe(1);
  expect((await storedToken(dir.path))?.access_token).not.toBe(old.access_token);
}

describe('oidc-provider', () => {
  it('signs in (JSON refused, then form without spending the code), reads whoami and entitlements, refreshes', async () => {
    server = await startOidcProvider();
    await signInAndUse();
    // The first exchange was JSON and refused before the code was looked at; the form one used it.
    const exchanges = server.tokenRequests.slice(0, 2);
    expect(exchanges).toEqual([
      { type: 'application/json', basic: false, status: 400 },
      { type: FORM, basic: false, status: 200 },
    ]);
    // Remembered per site: the refresh went form-encoded at once.
    expect(server.tokenRequests.slice(2)).toEqual([{ type: FORM, basic: false, status: 200 }]);
    const config = JSON.parse(await readFile(join(dir.path, 'config.json'), 'utf8'));
    expect(config.sites[server.siteUrl]).toMatchObject({ token_encoding: 'form', token_auth: 'post' });
  });
});

describe('@node-oauth/oauth2-server', () => {
  it('finds its endpoints in RFC 8414 metadata, signs in form-encoded, reads whoami and entitlements, refreshes', async () => {
    server = await startOAuth2Server({ metadata: true });
    await signInAndUse();
    expect(server.tokenRequests.map((r) => `${r.type} ${r.status}`)).toEqual([
      'application/json 400',
      `${FORM} 200`,
      `${FORM} 200`,
    ]);
    const config = JSON.parse(await readFile(join(dir.path, 'config.json'), 'utf8'));
    expect(config.sites[server.siteUrl]).toMatchObject({ token_endpoint: `${server.siteUrl}/token` });
  });

  it('sends the client secret by HTTP Basic, form-urlencoded, to a server that requires it', async () => {
    server = await startOAuth2Server({ basicOnly: true });
    await signInAndUse();
    expect(server.tokenRequests).toEqual([
      { type: 'application/json', basic: false, status: 400 },
      { type: FORM, basic: false, status: 401 },
      { type: FORM, basic: true, status: 200 },
      // the refresh: straight to what worked
      { type: FORM, basic: true, status: 200 },
    ]);
  });

  it('uses HTTP Basic from the start when the RFC 8414 metadata offers only client_secret_basic', async () => {
    server = await startOAuth2Server({ metadata: true, basicOnly: true });
    await signInAndUse();
    expect(server.tokenRequests.map((r) => r.basic)).toEqual([true, true, true]);
  });

  it('refreshes a short-lived token once for one command, and once for two concurrent commands', async () => {
    server = await startOAuth2Server({ accessTokenLifetime: 10 });
    expect((await mkt(['login', '--client-id', server.clientId])).code).toBe(0);
    await expireStoredToken(10_000);
    const one = await mkt(['whoami']);
    expect(one.stderr + one.code).toMatch(/0$/);
    expect(server.granted.refresh_token).toBe(1);

    await expireStoredToken(10_000);
    const both = await Promise.all([mkt(['whoami']), mkt(['entitlements'])]);
    for (const run of both) expect(run.stderr + run.code).toMatch(/0$/);
    expect(server.granted.refresh_token).toBe(2);
  });

  it('shows the server error and description when the token endpoint refuses, with a hint that changes something', async () => {
    server = await startOAuth2Server();
    const res = await mkt(['login', '--client-id', server.clientId], { MKT_CLIENT_SECRET: 'cs_wrong' });
    expect(res.code).toBe(4);
    expect(res.stderr).toContain('invalid_client: Invalid client: client is invalid');
    expect(res.stderr).toContain('with MKT_CLIENT_SECRET');
    expect(res.stderr).not.toMatch(/Try: mkt login\n/);
  });

  it('starts the browser opener without the four secrets in its environment', async () => {
    server = await startOAuth2Server();
    const dump = join(dir.path, 'browser-env.json');
    const res = await mkt(['login', '--client-id', server.clientId], {
      BROWSER_ENV_DUMP: dump,
      MKT_API_KEY: 'test_envKeyNeverInherited',
      MKT_ACCESS_TOKEN: 'at_envTokenNeverInherited',
      MKT_WEBHOOK_SECRET: 'whsec_envNeverInherited',
    });
    expect(res.code).toBe(0);
    const seen = JSON.parse(await readFile(dump, 'utf8')) as Record<string, string>;
    expect(seen.PATH).toBe(process.env.PATH);
    for (const name of ['MKT_CLIENT_SECRET', 'MKT_API_KEY', 'MKT_ACCESS_TOKEN', 'MKT_WEBHOOK_SECRET'])
      expect(seen[name]).toBeUndefined();
    expect(JSON.stringify(seen)).not.toMatch(/NeverInherited|cs_std_secret/);
  });
});
