import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { developerToken, useSandbox } from '../support/sandbox.js';
import { call, openConsent, openStream, postConsent } from './helpers.js';

// The sandbox is left running while its user browses the web (docs/DECISIONS.md §2, local servers,
// consent, API key powers, developer token): a web page must get nothing out of it.
const ctx = useSandbox({ sandboxPerTest: true });

const REDIRECT = 'http://127.0.0.1:9/callback';

/** A raw request with a chosen `Host` header (fetch does not let a caller set it). */
function withHost(path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: ctx.sandbox.port, path, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('DNS rebinding', () => {
  it('answers 421 to a foreign Host on pages, OAuth and the API alike', async () => {
    const authorize = `/oauth/authorize?${new URLSearchParams({
      client_id: ctx.sandbox.seed.app.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
    })}`;
    const dashboard = `/dashboard/apps/${ctx.sandbox.seed.app.id}?user_id=${ctx.sandbox.seed.users[0]!.id}`;
    for (const path of [
      '/',
      authorize,
      dashboard,
      '/api/v1/whoami',
      '/.well-known/oauth-authorization-server',
    ]) {
      const foreign = await withHost(path, `rebind.example:${ctx.sandbox.port}`);
      expect([path, foreign.status]).toEqual([path, 421]);
      expect(foreign.body).not.toContain(ctx.sandbox.seed.app.client_id);
      expect((await withHost(path, `localhost:${ctx.sandbox.port}`)).status).not.toBe(421);
    }
    expect((await withHost('/', `127.0.0.1:${ctx.sandbox.port + 1}`)).status).toBe(421);
  });
});

describe('consent is bound to the stored request', () => {
  const query = { client_id: '', redirect_uri: REDIRECT, scope: 'identity:read', state: 's1' };
  const open = () => openConsent(ctx.sandbox, { ...query, client_id: ctx.sandbox.seed.app.client_id });

  it('issues nothing for a POST without the anti-CSRF token, or from another Origin', async () => {
    const page = await open();
    expect(Object.keys(page.fields).sort()).toEqual(['csrf_token', 'request_id']);
    const choice = { user_id: ctx.sandbox.seed.users[0]!.id, decision: 'approve' };
    const noToken = await postConsent(ctx.sandbox, { request_id: page.fields.request_id!, ...choice });
    expect(noToken.status).toBe(403);
    expect(noToken.location).toBeNull();
    const wrongToken = await postConsent(ctx.sandbox, {
      ...page.fields,
      csrf_token: 'csrf_guess',
      ...choice,
    });
    expect(wrongToken.status).toBe(403);
    const crossSite = await postConsent(
      ctx.sandbox,
      { ...page.fields, ...choice },
      { origin: 'https://evil.example' },
    );
    expect(crossSite.status).toBe(403);
    expect(crossSite.location).toBeNull();
    // The guessable fields of the request alone, as a cross-site form would post them.
    const guessed = await postConsent(ctx.sandbox, {
      ...query,
      client_id: ctx.sandbox.seed.app.client_id,
      response_type: 'code',
      ...choice,
    });
    expect(guessed.status).toBe(400);
    expect(guessed.location).toBeNull();
    // The page's own form still works, once.
    const own = await postConsent(
      ctx.sandbox,
      { ...page.fields, ...choice },
      { origin: ctx.sandbox.siteUrl },
    );
    expect(own.status).toBe(302);
    expect(own.location!.searchParams.get('code')).toMatch(/^code_/);
    expect(own.location!.searchParams.get('state')).toBe('s1');
    expect((await postConsent(ctx.sandbox, { ...page.fields, ...choice })).status).toBe(400);
  });

  it('takes scope, redirect URI and state from the stored request, never from the POST', async () => {
    const page = await open();
    const tampered = await postConsent(ctx.sandbox, {
      ...page.fields,
      user_id: ctx.sandbox.seed.developer.id,
      decision: 'approve',
      scope: 'identity:read apps:write',
      redirect_uri: 'http://127.0.0.1:10/elsewhere',
      state: 'forged',
    });
    expect(tampered.status).toBe(302);
    expect(tampered.location!.origin + tampered.location!.pathname).toBe(REDIRECT);
    expect(tampered.location!.searchParams.get('state')).toBe('s1');
    const tokens = await call(ctx.sandbox, 'POST', '/api/oauth/token', {
      body: {
        grant_type: 'authorization_code',
        code: tampered.location!.searchParams.get('code'),
        redirect_uri: REDIRECT,
        client_id: ctx.sandbox.seed.app.client_id,
        client_secret: ctx.sandbox.seed.app.client_secret,
      },
    });
    expect(tokens.json.scope).toBe('identity:read');
    const apps = await call(ctx.sandbox, 'GET', '/api/v1/apps', { token: tokens.json.access_token });
    expect(apps.status).toBe(403);
  });

  it('shows who is who, and preselects the developer when apps:write is asked for', async () => {
    const plain = await open();
    const options = [...plain.html.matchAll(/<option value="([^"]+)"[^>]*>([^<]*)</g)];
    const label = (id: string) => options.find((o) => o[1] === id)![2]!;
    expect(label(ctx.sandbox.seed.developer.id)).toContain('developer, owner of Sandbox App');
    expect(label(ctx.sandbox.seed.users[2]!.id)).toContain('test user, pro-monthly, past_due');
    expect(plain.html).not.toMatch(new RegExp(`value="${ctx.sandbox.seed.developer.id}"[^>]* selected`));
    const manage = await openConsent(ctx.sandbox, {
      ...query,
      client_id: ctx.sandbox.seed.app.client_id,
      scope: 'apps:write',
    });
    expect(manage.html).toMatch(
      new RegExp(`<option value="${ctx.sandbox.seed.developer.id}" data-role="developer" selected(="")?>`),
    );
  });
});

describe('the simulator cannot mint developer powers', () => {
  it("refuses the app's owner and apps:write", async () => {
    const asOwner = await call(ctx.sandbox, 'POST', '/api/v1/simulator/authorize', {
      key: ctx.sandbox.seed.test_key,
      body: { app_id: ctx.sandbox.seed.app.id, user_id: ctx.sandbox.seed.developer.id },
    });
    expect(asOwner.status).toBe(403);
    expect(asOwner.json.error.code).toBe('forbidden');
    const writer = await call(ctx.sandbox, 'POST', '/api/v1/simulator/authorize', {
      key: ctx.sandbox.seed.test_key,
      body: {
        app_id: ctx.sandbox.seed.app.id,
        user_id: ctx.sandbox.seed.users[0]!.id,
        scopes: ['identity:read', 'apps:write'],
      },
    });
    expect(writer.status).toBe(403);
    // The server says its decision; the CLI adds what to do (src/refusal.ts).
    expect(writer.json.error.message).toMatch(/never "apps:write"/);
    expect(writer.json.error.message).not.toContain('mkt ');
    expect(writer.json.access_token).toBeUndefined();
  });
});

describe('an API key acts for its own app', () => {
  it('lists only its app and may not create apps', async () => {
    const writer = await developerToken(ctx.sandbox, ['apps:write']);
    const other = await call(ctx.sandbox, 'POST', '/api/v1/apps', { token: writer, body: { name: 'Other' } });
    expect(other.status).toBe(201);
    const listed = await call(ctx.sandbox, 'GET', '/api/v1/apps', { key: ctx.sandbox.seed.test_key });
    expect(listed.json.data.map((a: { id: string }) => a.id)).toEqual([ctx.sandbox.seed.app.id]);
    const created = await call(ctx.sandbox, 'POST', '/api/v1/apps', {
      key: ctx.sandbox.seed.test_key,
      body: { name: 'Mine' },
    });
    expect(created.status).toBe(403);
    expect(created.json.error.message).toBe('An API key acts for its own app only and cannot create apps.');
    const mine = await call(ctx.sandbox, 'GET', '/api/v1/apps', { token: writer });
    expect(mine.json.data.map((a: { name: string }) => a.name)).toEqual(['Sandbox App', 'Other']);
  });
});

describe('revocation closes relay streams', () => {
  it('when the key is deleted', async () => {
    const key = await call(ctx.sandbox, 'POST', `/api/v1/apps/${ctx.sandbox.seed.app.id}/keys`, {
      key: ctx.sandbox.seed.test_key,
      body: { mode: 'test' },
    });
    const stream = await openStream(ctx.sandbox, ctx.sandbox.seed.app.id, key.json.key);
    expect((await stream.next()).event).toBe('position');
    const other = await openStream(ctx.sandbox, ctx.sandbox.seed.app.id, ctx.sandbox.seed.test_key);
    expect((await other.next()).event).toBe('position');
    await call(ctx.sandbox, 'DELETE', `/api/v1/apps/${ctx.sandbox.seed.app.id}/keys/${key.json.id}`, {
      key: ctx.sandbox.seed.test_key,
    });
    await expect(stream.next()).rejects.toThrow('stream ended');
    // Another key's stream stays open and receives.
    await call(ctx.sandbox, 'POST', '/api/v1/simulator/events', {
      key: ctx.sandbox.seed.test_key,
      body: { app_id: ctx.sandbox.seed.app.id, event: 'user.revoked' },
    });
    expect((await other.next()).event).toBe('delivery');
    other.close();
  });

  it('when the webhook secret is rotated', async () => {
    const stream = await openStream(ctx.sandbox, ctx.sandbox.seed.app.id, ctx.sandbox.seed.test_key);
    await stream.next();
    await call(ctx.sandbox, 'POST', `/api/v1/apps/${ctx.sandbox.seed.app.id}/webhook-secret`, {
      key: ctx.sandbox.seed.test_key,
    });
    await expect(stream.next()).rejects.toThrow('stream ended');
  });

  it('when the grant is revoked (a spent refresh token replayed)', async () => {
    const page = await openConsent(ctx.sandbox, {
      client_id: ctx.sandbox.seed.app.client_id,
      redirect_uri: REDIRECT,
      scope: 'apps:write',
    });
    const consent = await postConsent(ctx.sandbox, {
      ...page.fields,
      user_id: ctx.sandbox.seed.developer.id,
      decision: 'approve',
    });
    const client = {
      client_id: ctx.sandbox.seed.app.client_id,
      client_secret: ctx.sandbox.seed.app.client_secret,
    };
    const first = await call(ctx.sandbox, 'POST', '/api/oauth/token', {
      body: {
        grant_type: 'authorization_code',
        code: consent.location!.searchParams.get('code'),
        redirect_uri: REDIRECT,
        ...client,
      },
    });
    const second = await call(ctx.sandbox, 'POST', '/api/oauth/token', {
      body: { grant_type: 'refresh_token', refresh_token: first.json.refresh_token, ...client },
    });
    const res = await fetch(`${ctx.sandbox.siteUrl}/api/v1/apps/${ctx.sandbox.seed.app.id}/webhooks/stream`, {
      headers: { authorization: `Bearer ${second.json.access_token}` },
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    // The first replay is the reuse interval's one retry; the second is reuse.
    for (let i = 0; i < 2; i++) {
      await call(ctx.sandbox, 'POST', '/api/oauth/token', {
        body: { grant_type: 'refresh_token', refresh_token: first.json.refresh_token, ...client },
      });
    }
    for (;;) if ((await reader.read()).done) break;
  });
});

describe('standards', () => {
  it('serves RFC 8414 authorization server metadata', async () => {
    const meta = await call(ctx.sandbox, 'GET', '/.well-known/oauth-authorization-server');
    expect(meta.status).toBe(200);
    expect(meta.json).toEqual({
      issuer: ctx.sandbox.siteUrl,
      authorization_endpoint: `${ctx.sandbox.siteUrl}/oauth/authorize`,
      token_endpoint: `${ctx.sandbox.siteUrl}/api/oauth/token`,
      device_authorization_endpoint: `${ctx.sandbox.siteUrl}/api/oauth/device_authorization`,
      response_types_supported: ['code'],
      grant_types_supported: [
        'authorization_code',
        'refresh_token',
        'urn:ietf:params:oauth:grant-type:device_code',
      ],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      scopes_supported: ['identity:read', 'entitlements:read', 'apps:write'],
      sandbox_client_id: ctx.sandbox.seed.app.client_id,
    });
  });

  it('says invalid_token in WWW-Authenticate for a bad or expired token (RFC 6750 §3.1)', async () => {
    const bad = await call(ctx.sandbox, 'GET', '/api/v1/whoami', { token: 'at_nope' });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
    const none = await call(ctx.sandbox, 'GET', '/api/v1/whoami');
    expect(none.headers.get('www-authenticate')).not.toContain('error=');
  });

  it('ignores token parameters it does not know, and still refuses repeated ones', async () => {
    const page = await openConsent(ctx.sandbox, {
      client_id: ctx.sandbox.seed.app.client_id,
      redirect_uri: REDIRECT,
    });
    const consent = await postConsent(ctx.sandbox, {
      ...page.fields,
      user_id: ctx.sandbox.seed.users[0]!.id,
      decision: 'approve',
    });
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code: consent.location!.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      client_id: ctx.sandbox.seed.app.client_id,
      client_secret: ctx.sandbox.seed.app.client_secret,
      resource: 'https://api.example',
    });
    const repeated = await call(ctx.sandbox, 'POST', '/api/oauth/token', {
      rawBody: `${form}&resource=https://other.example`,
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(repeated.status).toBe(400);
    expect(repeated.json.error).toBe('invalid_request');
    const ok = await call(ctx.sandbox, 'POST', '/api/oauth/token', {
      rawBody: form.toString(),
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(ok.status).toBe(200);
  });

  it('takes the lastEventId query parameter as Last-Event-ID and sends retry:', async () => {
    const sent: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await call(ctx.sandbox, 'POST', '/api/v1/simulator/events', {
        key: ctx.sandbox.seed.test_key,
        body: { app_id: ctx.sandbox.seed.app.id, event: 'user.revoked' },
      });
      sent.push(res.json.delivery_id);
    }
    const controller = new AbortController();
    const res = await fetch(
      `${ctx.sandbox.siteUrl}/api/v1/apps/${ctx.sandbox.seed.app.id}/webhooks/stream?lastEventId=1`,
      {
        headers: { 'x-api-key': ctx.sandbox.seed.test_key },
        signal: controller.signal,
      },
    );
    expect(res.status).toBe(200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes(sent[2]!)) text += (await reader.read()).value;
    controller.abort();
    expect(text).toMatch(/^retry: \d+$/m);
    expect(text).not.toContain(sent[0]!);
    expect(text).toContain(sent[1]!);
    expect(text).not.toContain('event: position');
  });
});

describe('text that would not survive a restart is refused', () => {
  it('lone surrogates and control characters get a 400 JSON error', async () => {
    const writer = await developerToken(ctx.sandbox, ['apps:write']);
    const cases: Array<[string, string, string]> = [
      ['POST', '/api/v1/apps', '{"name":"Half \\ud83d"}'],
      ['POST', '/api/v1/apps', '{"name":"Bell \\u0007"}'],
      ['PATCH', `/api/v1/apps/${ctx.sandbox.seed.app.id}`, '{"name":"Line\\nbreak"}'],
      ['POST', `/api/v1/apps/${ctx.sandbox.seed.app.id}/plans`, '{"id":"x","name":"\\udc00","kind":"free"}'],
      [
        'POST',
        '/api/v1/simulator/users',
        `{"app_id":"${ctx.sandbox.seed.app.id}","plan":"free","status":"active","name":"\\ud800x"}`,
      ],
    ];
    for (const [method, path, rawBody] of cases) {
      const res = await call(ctx.sandbox, method, path, { token: writer, rawBody });
      expect([path, rawBody, res.status, res.json?.error?.code]).toEqual([
        path,
        rawBody,
        400,
        'invalid_request',
      ]);
    }
    const fine = await call(ctx.sandbox, 'POST', '/api/v1/apps', {
      token: writer,
      rawBody: '{"name":"Emoji \\ud83d\\ude00"}',
    });
    expect(fine.status).toBe(201);
  });
});
