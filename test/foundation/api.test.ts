import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createProxy } from 'proxy';
import { runMkt, tempDir } from '../support/cli.js';
import { json, startServer } from '../support/server.js';

const KEY = 'test_k3yValueThatMustNeverLeak';
let dir: { path: string; remove(): Promise<void> };
const closers: Array<() => Promise<void>> = [];

beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  while (closers.length) await closers.pop()!();
  await dir.remove();
});

async function server(handler: Parameters<typeof startServer>[0]) {
  const s = await startServer(handler);
  closers.push(s.close);
  return s;
}

function mkt(args: string[], site: string, env: Record<string, string> = {}) {
  return runMkt(args, dir.path, { env: { MKT_SITE_URL: site, MKT_API_KEY: KEY, ...env } });
}

describe('mkt api', () => {
  it('sends the key, a User-Agent naming mkt, and prints the JSON response', async () => {
    const s = await server((_req, res) => json(res, 200, { id: 'usr_1', email: 'a@b.c', extra: [1] }));
    const r = await mkt(['api', 'GET', '/whoami'], s.url);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ id: 'usr_1', email: 'a@b.c', extra: [1] });
    expect(s.seen[0]!.url).toBe('/api/v1/whoami');
    expect(s.seen[0]!.headers['x-api-key']).toBe(KEY);
    expect(s.seen[0]!.headers['user-agent']).toMatch(/^mkt\/\d+\.\d+\.\d+ \(node v\d+.*; linux x64\)$/);
  });

  it('turns fields into a JSON body for POST and a query for GET', async () => {
    const s = await server((_req, res) => json(res, 200, {}));
    await mkt(
      [
        'api',
        'POST',
        '/apps',
        '--field',
        'name=My App',
        '--field',
        'redirect_uris[]=http://127.0.0.1/cb',
        '--field',
        'n=3',
      ],
      s.url,
    );
    await mkt(['api', 'GET', '/entitlements', '--field', 'user_id=usr_9'], s.url);
    expect(JSON.parse(s.seen[0]!.body)).toEqual({
      name: 'My App',
      redirect_uris: ['http://127.0.0.1/cb'],
      n: 3,
    });
    expect(s.seen[0]!.headers['content-type']).toBe('application/json');
    expect(s.seen[1]!.url).toBe('/api/v1/entitlements?user_id=usr_9');
  });

  it('retries 503 and a connection reset for GET, then succeeds', async () => {
    const s = await server((req, res, _seen, i) => {
      if (i === 0) return json(res, 503, { error: { code: 'unavailable', message: 'busy' } });
      if (i === 1) return req.socket.destroy();
      json(res, 200, { ok: true });
    });
    const r = await mkt(['api', 'GET', '/whoami'], s.url);
    expect(r.code).toBe(0);
    expect(s.seen).toHaveLength(3);
  });

  it('never repeats a POST after a 503 (it may have acted)', async () => {
    const s = await server((_req, res) =>
      json(res, 503, { error: { code: 'unavailable', message: 'busy' } }),
    );
    const r = await mkt(['api', 'POST', '/apps', '--field', 'name=x'], s.url);
    expect(r.code).toBe(1);
    expect(s.seen).toHaveLength(1);
    expect(r.stderr).toContain('busy');
  });

  it('honours Retry-After on 429 and backs off without it', async () => {
    const s = await server((_req, res, _seen, i) => {
      if (i === 0)
        return json(
          res,
          429,
          { error: { code: 'rate_limited', message: 'slow down' } },
          { 'retry-after': '1' },
        );
      if (i === 1) return json(res, 429, { error: { code: 'rate_limited', message: 'slow down' } });
      json(res, 200, { ok: true });
    });
    const started = Date.now();
    const r = await mkt(['api', 'POST', '/simulator/events', '--field', 'event=x'], s.url);
    expect(r.code).toBe(0);
    expect(s.seen).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it('exits 5 when the server keeps answering 429', async () => {
    const s = await server((_req, res) =>
      json(
        res,
        429,
        { error: { code: 'rate_limited', message: 'limit of 100 per minute' } },
        { 'retry-after': '0' },
      ),
    );
    const r = await mkt(['api', 'GET', '/whoami', '--json'], s.url);
    expect(r.code).toBe(5);
    expect(s.seen).toHaveLength(5);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'rate_limited' });
  });

  it('gives up at once when Retry-After is longer than we are willing to wait', async () => {
    const s = await server((_req, res) =>
      json(res, 429, { error: { code: 'rate_limited', message: 'wait' } }, { 'retry-after': '3600' }),
    );
    const r = await mkt(['api', 'GET', '/whoami'], s.url);
    expect(r.code).toBe(5);
    expect(s.seen).toHaveLength(1);
    expect(r.stderr).toContain('Try again in 3600 s');
  });

  it.each([
    [401, { error: { code: 'unauthorized', message: 'bad key' } }, 4, 'bad key'],
    [403, { error: { code: 'forbidden', message: 'not your app' } }, 4, 'not your app'],
    [404, { error: { code: 'not_found', message: 'no such app' } }, 1, 'no such app'],
    [400, { error: 'invalid_grant', error_description: 'code expired' }, 1, 'invalid_grant: code expired'],
    [422, { message: 'plain message' }, 1, 'plain message'],
  ])('maps a %i JSON error body to its exit code and message', async (status, body, exit, text) => {
    const s = await server((_req, res) => json(res, status, body));
    const r = await mkt(['api', 'GET', '/whoami', '--json'], s.url);
    expect(r.code).toBe(exit);
    const err = JSON.parse(r.stdout).error;
    expect(err.message).toContain(text);
    expect(Array.isArray(err.hints)).toBe(true);
    // The key came from MKT_API_KEY, which a new sign-in would not replace: the hint is about it.
    if (status === 401) expect(err.hints.join(' ')).toContain('unset MKT_API_KEY');
  });

  it('shows status and a short excerpt for HTML and text error bodies', async () => {
    const page = `<html><head><style>p{}</style></head><body><h1>Bad Gateway</h1><p>upstream ${'x'.repeat(500)}</p></body></html>`;
    const s = await server((req, res) => {
      res.writeHead(req.url!.includes('html') ? 400 : 418, {
        'content-type': req.url!.includes('html') ? 'text/html' : 'text/plain',
      });
      res.end(req.url!.includes('html') ? page : 'I am a teapot');
    });
    const html = await mkt(['api', 'GET', '/html'], s.url);
    expect(html.code).toBe(1);
    expect(html.stderr).toContain('HTTP 400: Bad Gateway upstream');
    expect(html.stderr).not.toContain('<h1>');
    expect(html.stderr.length).toBeLessThan(400);
    const text = await mkt(['api', 'GET', '/text'], s.url);
    expect(text.stderr).toContain('HTTP 418: I am a teapot');
  });

  it('times out a server that never answers (exit 6), never hangs', async () => {
    const s = await server(() => undefined);
    const r = await mkt(['api', 'POST', '/apps'], s.url, { MKT_HTTP_TIMEOUT: '1' });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('within 1 s, retries included');
  });

  it('exits 6 with a hint when nothing listens: where the site URL came from, and the sandbox on its port', async () => {
    const s = await server(() => undefined);
    await s.close();
    closers.pop();
    const port = new URL(s.url).port;
    const r = await mkt(['api', 'GET', '/whoami'], s.url);
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('nothing is listening');
    expect(r.stderr).toContain(`the site URL ${s.url} comes from MKT_SITE_URL`);
    expect(r.stderr).toContain(`Try: mkt sandbox start --port ${port}`);
    const flag = await runMkt(['whoami', '--site-url', s.url], dir.path, { env: { MKT_API_KEY: KEY } });
    expect(flag.code).toBe(6);
    expect(flag.stderr).toContain(`comes from --site-url`);
    expect(flag.stderr).toContain(`Try: mkt sandbox start --port ${port}`);
  });

  it('redacts every secret in --verbose output', async () => {
    const s = await server((_req, res) =>
      json(res, 200, {
        access_token: 'at_abcdefSECRET',
        refresh_token: 'rt_zzzzSECRET',
        note: 'key test_inlineSECRET1',
      }),
    );
    const r = await mkt(
      ['api', 'POST', '/oauth/token', '--field', 'client_secret=cs_hiddenSECRET', '--verbose'],
      s.url,
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('> POST');
    expect(r.stderr).toContain('< 200');
    expect(r.stderr).not.toContain('SECRET');
    expect(r.stderr).not.toContain(KEY);
  });

  it('goes through HTTP_PROXY, and around it for NO_PROXY hosts', async () => {
    const target = await server((_req, res) => json(res, 200, { via: 'target' }));
    const proxied: string[] = [];
    const proxyServer = createProxy(createServer());
    // undici tunnels through the proxy with CONNECT, even for http:// targets.
    proxyServer.on('request', (req) => proxied.push(req.url ?? ''));
    proxyServer.on('connect', (req) => proxied.push(req.url ?? ''));
    await new Promise<void>((resolve) => proxyServer.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => proxyServer.close(() => resolve())));
    const proxyUrl = `http://127.0.0.1:${(proxyServer.address() as AddressInfo).port}`;
    const r = await mkt(['api', 'GET', '/whoami'], target.url, { HTTP_PROXY: proxyUrl });
    expect(r.code).toBe(0);
    expect(proxied).toEqual([new URL(target.url).host]);
    const bypass = await mkt(['api', 'GET', '/whoami'], target.url, {
      HTTP_PROXY: proxyUrl,
      NO_PROXY: '127.0.0.1',
    });
    expect(bypass.code).toBe(0);
    expect(proxied).toHaveLength(1);
    expect(target.seen).toHaveLength(2);
  });

  it('refuses __proto__, constructor and prototype in --field keys (exit 2), sending nothing', async () => {
    const s = await server((_req, res) =>
      json(res, 404, { error: { code: 'not_found', message: 'no such path' } }),
    );
    for (const field of [
      '__proto__.allowErrorStatus=true',
      'constructor.prototype.allowErrorStatus=true',
      'a.prototype=1',
      'x.__proto__[]=1',
    ]) {
      const r = await mkt(['api', 'GET', '/nope', '--field', field], s.url);
      expect(r.stderr).toContain('cannot be a field name');
      expect(r.code).toBe(2);
    }
    expect(s.seen).toHaveLength(0);
    // A name that Object.prototype happens to have is an ordinary field.
    const ok = await mkt(
      ['api', 'POST', '/things', '--field', 'toString.x=1', '--field', 'valueOf=2'],
      s.url,
    );
    expect(ok.code).toBe(1);
    expect(JSON.parse(s.seen[0]!.body)).toEqual({ toString: { x: 1 }, valueOf: 2 });
  });

  it('refuses a PATH without a leading slash and --input that is not JSON (exit 2)', async () => {
    const s = await server((_req, res) => json(res, 200, {}));
    expect((await mkt(['api', 'GET', 'whoami'], s.url)).code).toBe(2);
    const r = await runMkt(['api', 'POST', '/apps', '--input', '-'], dir.path, {
      env: { MKT_SITE_URL: s.url, MKT_API_KEY: KEY },
      input: '{not json',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('stdin is not JSON');
    expect(s.seen).toHaveLength(0);
  });
});

describe('token endpoint discovery', () => {
  it('falls back to {base_url}/oauth/token on 404 and remembers it per site', async () => {
    const s = await server((req, res) => {
      if (req.url === '/api/v1/oauth/token')
        return json(res, 200, { access_token: 'at_1', token_type: 'Bearer', expires_in: 60 });
      json(res, 404, { error: { code: 'not_found', message: 'nope' } });
    });
    const { ApiClient } = await import('../../src/api/client.js');
    const { tokenRequest } = await import('../../src/auth/token-endpoint.js');
    const { ConfigStore } = await import('../../src/config/store.js');
    const { systemClock } = await import('../../src/platform/clock.js');
    const config = new ConfigStore(dir.path);
    const client = () =>
      new ApiClient({
        siteUrl: s.url,
        env: {},
        clock: systemClock,
        userAgent: 'test',
      });
    const first = await tokenRequest(
      { api: client(), config },
      { grant_type: 'authorization_code', code: 'c' },
    );
    expect(first.data).toMatchObject({ access_token: 'at_1' });
    expect(s.seen.map((r) => r.url)).toEqual([
      '/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration',
      '/api/oauth/token',
      '/api/v1/oauth/token',
    ]);
    const saved = JSON.parse(await readFile(join(dir.path, 'config.json'), 'utf8'));
    expect(saved.sites[s.url].token_endpoint).toBe(`${s.url}/api/v1/oauth/token`);
    await tokenRequest({ api: client(), config }, { grant_type: 'authorization_code', code: 'c' });
    expect(s.seen.map((r) => r.url).slice(4)).toEqual(['/api/v1/oauth/token']);
  });

  it('shows the status and an excerpt (secrets redacted) when a token response has no access_token', async () => {
    const s = await server((_req, res) =>
      json(res, 200, { refresh_token: 'rt_secretNeverShown', note: 'half done' }),
    );
    const { ApiClient } = await import('../../src/api/client.js');
    const { tokenRequest } = await import('../../src/auth/token-endpoint.js');
    const { systemClock } = await import('../../src/platform/clock.js');
    const client = new ApiClient({ siteUrl: s.url, env: {}, clock: systemClock, userAgent: 'test' });
    const failed = tokenRequest({ api: client }, { grant_type: 'authorization_code', code: 'c' });
    await expect(failed).rejects.toMatchObject({
      code: 'bad_token_response',
      message: expect.stringMatching(/answered 200 without an access_token: .*half done/),
    });
    await expect(failed).rejects.not.toMatchObject({ message: expect.stringContaining('rt_secret') });
  });
});
