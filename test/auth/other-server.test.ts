import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runMkt, tempDir } from '../support/cli.js';
import { startServer, type TestServer } from '../support/server.js';
import { browserCommand, storedSecrets, storedToken } from './helpers.js';

// A marketplace that is not the sandbox: the token endpoint only at {base_url}/oauth/token, no scope
// in token responses, entitlements without status/expires_at, HTML error pages, optional refresh.
interface Seen {
  method: string;
  path: string;
  body: Record<string, string>;
}
let server: TestServer;
let site: string;
let seen: Seen[] = [];
let challenge = '';
let refreshMode: 'rotate' | 'unsupported' = 'rotate';
const validTokens = new Set<string>();
const spentRefresh = new Set<string>();
let issued = 0;

const ENTITLEMENT = {
  user_id: 'usr_t1',
  app_id: 'app_t1',
  plan: 'pro',
  features: ['export', 'reports'],
  usage: { api_calls: 7, limit: 100 },
  region: 'eu-west',
};

function tokens() {
  issued += 1;
  validTokens.add(`at_${issued}x`);
  return {
    access_token: `at_${issued}x`,
    token_type: 'Bearer',
    expires_in: 3600,
    refresh_token: `rt_${issued}x`,
  };
}

beforeAll(async () => {
  server = await startServer((req, res, request) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const body: Record<string, string> =
      req.method === 'POST' && request.body ? JSON.parse(request.body) : {};
    seen.push({ method: req.method ?? '', path: url.pathname, body });
    const json = (status: number, doc: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(doc));
    };
    const authorized =
      validTokens.has(String(req.headers.authorization).replace(/^Bearer /, '')) ||
      req.headers['x-api-key'] === 'test_goodkey1';
    if (url.pathname === '/oauth/authorize') {
      challenge = url.searchParams.get('code_challenge') ?? '';
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', 'c_one');
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      res.writeHead(302, { location: back.href });
      return res.end();
    }
    if (url.pathname === '/api/v1/oauth/token' && req.method === 'POST') {
      if (body.grant_type === 'authorization_code') return json(200, tokens());
      if (refreshMode === 'unsupported') return json(400, { error: 'unsupported_grant_type' });
      if (spentRefresh.has(body.refresh_token!) || !/^rt_\d+x$/.test(body.refresh_token ?? ''))
        return json(400, { error: 'invalid_grant', error_description: 'refresh token not valid' });
      spentRefresh.add(body.refresh_token!);
      return json(200, tokens());
    }
    if (url.pathname === '/api/v1/whoami' && authorized)
      return json(200, { id: 'usr_t1', email: 't@example.com', name: 'Tess', avatar_url: 'https://x/a.png' });
    if (url.pathname === '/api/v1/entitlements' && authorized) {
      if (url.searchParams.get('user_id') === 'usr_none')
        return json(404, {
          error: { code: 'not_found', message: 'User "usr_none" has no entitlement on app "app_t1".' },
        });
      if (url.searchParams.get('user_id') === 'usr_broken') {
        res.writeHead(500, { 'content-type': 'text/html' });
        return res.end(
          '<html><head><title>Oops</title></head><body><h1>Internal Server Error</h1><p>upstream billing down</p></body></html>',
        );
      }
      return json(200, ENTITLEMENT);
    }
    if (url.pathname.startsWith('/api/v1/')) return json(401, { message: 'not authenticated' });
    res.writeHead(404, { 'content-type': 'text/html' });
    res.end('<h1>Not Found</h1>');
  });
  site = server.url;
});
afterAll(() => server.close());

let dir: { path: string; remove(): Promise<void> };
let env: Record<string, string>;
beforeEach(async () => {
  dir = await tempDir();
  seen = [];
  refreshMode = 'rotate';
  env = {
    MKT_SITE_URL: site,
    MKT_CLIENT_SECRET: 'cs_other_secret',
    MKT_BROWSER: browserCommand(fileURLToPath(new URL('../fixtures/auth/follow.js', import.meta.url))),
  };
});
afterEach(() => dir.remove());

const mkt = (args: string[], extra: Record<string, string> = {}) =>
  runMkt(args, dir.path, { env: { ...env, ...extra }, timeoutMs: 20_000 });

async function expireStoredToken(): Promise<Record<string, unknown>> {
  const file = join(dir.path, 'credentials.json');
  const all = JSON.parse(await readFile(file, 'utf8')) as Record<string, string>;
  const token = JSON.parse(all['default:oauth']!) as Record<string, unknown>;
  token.expires_at = Date.now() - 1000;
  all['default:oauth'] = JSON.stringify(token);
  await writeFile(file, JSON.stringify(all));
  return token;
}

describe('a marketplace that differs from the sandbox', () => {
  it('logs in with the token endpoint only at {base_url}/oauth/token, with PKCE, and remembers that path', async () => {
    const res = await mkt(['login', '--client-id', 'cli_other']);
    expect(res.stderr).toContain(`✓ Logged in as Tess <t@example.com> (usr_t1) on ${site}`);
    expect(res.code).toBe(0);
    const exchange = seen.find((s) => s.path === '/api/v1/oauth/token')!;
    expect(seen.some((s) => s.path === '/api/oauth/token')).toBe(true); // tried first, answered 404
    expect(exchange.body).toMatchObject({
      grant_type: 'authorization_code',
      code: 'c_one',
      client_id: 'cli_other',
      client_secret: 'cs_other_secret',
    });
    expect(exchange.body.redirect_uri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(createHash('sha256').update(exchange.body.code_verifier!).digest('base64url')).toBe(challenge);
    const config = JSON.parse(await readFile(join(dir.path, 'config.json'), 'utf8'));
    expect(config.sites[site].token_endpoint).toBe(`${site}/api/v1/oauth/token`);
    // The requested scopes are kept when the server does not echo them.
    expect((await storedToken(dir.path))?.scope).toBe('identity:read entitlements:read');
  });

  it('refreshes an expired token at the remembered endpoint before using it', async () => {
    expect((await mkt(['login', '--client-id', 'cli_other'])).code).toBe(0);
    const old = await expireStoredToken();
    seen = [];
    const res = await mkt(['auth', 'token']);
    expect(res.code).toBe(0);
    expect(res.stdout.trim()).not.toBe(old.access_token);
    expect(validTokens.has(res.stdout.trim())).toBe(true);
    expect(seen.map((s) => `${s.path} ${s.body.grant_type ?? ''}`.trim())).toEqual([
      '/api/v1/oauth/token refresh_token',
    ]);
    expect(seen[0]!.body).toEqual({
      grant_type: 'refresh_token',
      refresh_token: old.refresh_token,
      client_id: 'cli_other',
      client_secret: 'cs_other_secret',
    });
  });

  it('asks to log in again when the server cannot refresh, and keeps the stored token', async () => {
    expect((await mkt(['login', '--client-id', 'cli_other'])).code).toBe(0);
    refreshMode = 'unsupported';
    await expireStoredToken();
    const before = await storedSecrets(dir.path);
    const res = await mkt(['whoami']);
    expect(res.code).toBe(4);
    expect(res.stderr).toContain('could not be renewed');
    expect(res.stderr).toContain('Try: mkt login');
    expect(await storedSecrets(dir.path)).toEqual(before);
  });

  it('forgets the token when the server says the grant is invalid', async () => {
    expect((await mkt(['login', '--client-id', 'cli_other'])).code).toBe(0);
    const token = await expireStoredToken();
    spentRefresh.add(String(token.refresh_token));
    const res = await mkt(['auth', 'token']);
    expect(res.code).toBe(4);
    expect(res.stderr).toContain('revoked or has expired');
    expect(await storedToken(dir.path)).toBeUndefined();
  });

  it('shows entitlements without status and expires_at, keeping unknown fields in --json', async () => {
    expect((await mkt(['login', '--client-id', 'cli_other'])).code).toBe(0);
    const json = await mkt(['entitlements', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(ENTITLEMENT);
    const text = await mkt(['entitlements']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/Plan:\s+pro/);
    expect(text.stdout).toMatch(/Status:\s+-/);
    expect(text.stdout).toMatch(/Usage:\s+7 of 100 API calls/);

    const yes = await mkt(['entitlements', '--feature', 'export']);
    expect(yes.code).toBe(0);
    const no = await mkt(['entitlements', '--feature', 'import']);
    expect(no.code).toBe(3);
    expect(no.stderr).toContain('Plan "pro" does not include "import" (features: export, reports)');
    const noJson = await mkt(['entitlements', '--feature', 'import', '--json']);
    expect(noJson.code).toBe(3);
    expect(JSON.parse(noJson.stdout)).toEqual(ENTITLEMENT);
  });

  it('reports an HTML 500 with its status and a short excerpt, not the markup', async () => {
    const res = await mkt(['entitlements', '--user', 'usr_broken'], { MKT_API_KEY: 'test_goodkey1' });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('HTTP 500');
    expect(res.stderr).toContain('upstream billing down');
    expect(res.stderr).not.toContain('<h1>');
    const noUser = await mkt(['entitlements'], { MKT_API_KEY: 'test_goodkey1' });
    expect(noUser.code).toBe(2);
    expect(noUser.stderr).toContain('--user usr_');
  });

  it('answers "no" (exit 3) to --feature for a user without any entitlement; without --feature it is an error', async () => {
    const key = { MKT_API_KEY: 'test_goodkey1' };
    const no = await mkt(['entitlements', '--user', 'usr_none', '--feature', 'export'], key);
    expect(no.stderr).toContain('has no entitlement');
    expect(no.stderr).toContain('"export" is not allowed');
    expect(no.code).toBe(3);
    expect((await mkt(['entitlements', '--user', 'usr_none'], key)).code).toBe(1);
  });
});
