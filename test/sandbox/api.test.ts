import { jwtVerify } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { developerToken as sandboxDeveloperToken, startTestSandbox } from '../support/sandbox.js';
import { call, expectError } from './helpers.js';

let sb: Sandbox;
afterEach(async () => {
  await sb?.close();
});

const developerToken = (scopes: string[]) => sandboxDeveloperToken(sb, scopes);

describe('identity and entitlements', () => {
  it('answers whoami for a key with the owning developer', async () => {
    sb = await startTestSandbox();
    const me = await call(sb, 'GET', '/api/v1/whoami', { key: sb.seed.live_key });
    expect(me.status).toBe(200);
    expect(me.json).toMatchObject({
      id: sb.seed.developer.id,
      email: 'dev@sandbox.test',
      name: 'Dev Eloper',
    });
  });

  it('answers entitlements per user, with the free-plan fallback and 404 otherwise', async () => {
    sb = await startTestSandbox();
    const [ada, fred, pat] = sb.seed.users;
    const a = await call(sb, 'GET', `/api/v1/entitlements?user_id=${ada!.id}`, { key: sb.seed.test_key });
    expect(a.json).toEqual({
      user_id: ada!.id,
      app_id: sb.seed.app.id,
      plan: 'pro-monthly',
      status: 'active',
      features: ['basic', 'export', 'api'],
      usage: { api_calls: 42, limit: 10000 },
      expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
    });
    const f = await call(sb, 'GET', `/api/v1/entitlements?user_id=${fred!.id}`, { key: sb.seed.test_key });
    expect(f.json).toMatchObject({ plan: 'free', status: 'active', features: ['basic'] });
    expect(f.json.expires_at).toBeUndefined();
    const p = await call(sb, 'GET', `/api/v1/entitlements?user_id=${pat!.id}`, { key: sb.seed.test_key });
    expect(p.json.status).toBe('past_due');
    // The developer has no subscription: the free plan applies; without a free plan it is 404.
    const d = await call(sb, 'GET', `/api/v1/entitlements?user_id=${sb.seed.developer.id}`, {
      key: sb.seed.test_key,
    });
    expect(d.json).toMatchObject({ plan: 'free', status: 'active' });
    expect(
      (await call(sb, 'DELETE', `/api/v1/apps/${sb.seed.app.id}/plans/free`, { key: sb.seed.test_key }))
        .status,
    ).toBe(200);
    const archived = await call(sb, 'GET', `/api/v1/entitlements?user_id=${sb.seed.developer.id}`, {
      key: sb.seed.test_key,
    });
    expectError(archived, 404, 'not_found');
  });

  it('enforces token scopes', async () => {
    sb = await startTestSandbox();
    const identityOnly = await developerToken(['identity:read']);
    expect((await call(sb, 'GET', '/api/v1/whoami', { token: identityOnly })).status).toBe(200);
    expectError(await call(sb, 'GET', '/api/v1/entitlements', { token: identityOnly }), 403, 'forbidden');
    expectError(await call(sb, 'GET', '/api/v1/apps', { token: identityOnly }), 403, 'forbidden');
    const writer = await developerToken(['apps:write']);
    const apps = await call(sb, 'GET', '/api/v1/apps', { token: writer });
    expect(apps.json.data.map((a: { id: string }) => a.id)).toEqual([sb.seed.app.id]);
    expectError(await call(sb, 'GET', '/api/v1/whoami', { token: writer }), 403, 'forbidden');
  });
});

describe('apps, plans and keys', () => {
  it('creates, reads, pages, updates and deletes', async () => {
    sb = await startTestSandbox();
    const key = sb.seed.live_key;
    const writer = await developerToken(['apps:write']);
    const created = await call(sb, 'POST', '/api/v1/apps', {
      token: writer,
      body: { name: 'Second', redirect_uris: ['http://127.0.0.1/cb', 'https://app.example/cb'] },
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      name: 'Second',
      client_secret: expect.stringMatching(/^cs_/),
      webhook_url: null,
    });
    const id = created.json.id as string;
    // A key acts for its own app only.
    expectError(await call(sb, 'GET', `/api/v1/apps/${id}`, { key }), 403, 'forbidden');
    const got = await call(sb, 'GET', `/api/v1/apps/${id}`, { token: writer });
    expect(got.json.client_secret).toBeUndefined();
    for (let i = 0; i < 3; i++)
      await call(sb, 'POST', '/api/v1/apps', { token: writer, body: { name: `More ${i}` } });
    const page1 = await call(sb, 'GET', '/api/v1/apps?limit=2', { token: writer });
    expect(page1.json).toMatchObject({ has_more: true, next_cursor: expect.any(String) });
    const page2 = await call(sb, 'GET', `/api/v1/apps?limit=2&cursor=${page1.json.next_cursor}`, {
      token: writer,
    });
    const page3 = await call(sb, 'GET', `/api/v1/apps?limit=2&cursor=${page2.json.next_cursor}`, {
      token: writer,
    });
    expect(page3.json).toMatchObject({ has_more: false, next_cursor: null });
    const names = [...page1.json.data, ...page2.json.data, ...page3.json.data].map(
      (a: { name: string }) => a.name,
    );
    expect(names).toEqual(['Sandbox App', 'Second', 'More 0', 'More 1', 'More 2']);

    const rotated = await call(sb, 'POST', `/api/v1/apps/${id}/client-secret`, { token: writer });
    expect(rotated.json.client_secret).not.toBe(created.json.client_secret);
    const secret1 = await call(sb, 'GET', `/api/v1/apps/${id}/webhook-secret`, { token: writer });
    const secret2 = await call(sb, 'POST', `/api/v1/apps/${id}/webhook-secret`, { token: writer });
    expect(secret1.json.webhook_secret).toMatch(/^whsec_/);
    expect(secret2.json.webhook_secret).not.toBe(secret1.json.webhook_secret);
    const patched = await call(sb, 'PATCH', `/api/v1/apps/${id}`, {
      token: writer,
      body: { embed_url: 'https://e.example/' },
    });
    expect(patched.json.embed_url).toBe('https://e.example/');
    expect((await call(sb, 'DELETE', `/api/v1/apps/${id}`, { token: writer })).status).toBe(204);
    expectError(await call(sb, 'GET', `/api/v1/apps/${id}`, { token: writer }), 404, 'not_found');
  });

  it('manages plans (archive on delete with subscribers) and keys', async () => {
    sb = await startTestSandbox();
    const key = sb.seed.test_key;
    const base = `/api/v1/apps/${sb.seed.app.id}`;
    const gold = await call(sb, 'POST', `${base}/plans`, {
      key,
      body: {
        id: 'gold-annual',
        name: 'Gold',
        kind: 'annual',
        price: { amount: 9900, currency: 'EUR' },
        features: ['basic'],
      },
    });
    expect(gold.status).toBe(201);
    expect(gold.json).toMatchObject({
      id: 'gold-annual',
      archived: false,
      subscribers: 0,
      api_call_limit: null,
    });
    expectError(
      await call(sb, 'POST', `${base}/plans`, { key, body: { id: 'x', name: 'X', kind: 'monthly' } }),
      400,
      'invalid_request',
    );
    expectError(
      await call(sb, 'PATCH', `${base}/plans/gold-annual`, { key, body: { kind: 'free' } }),
      400,
      'invalid_request',
    );
    const renamed = await call(sb, 'PATCH', `${base}/plans/gold-annual`, { key, body: { name: 'Gold+' } });
    expect(renamed.json.name).toBe('Gold+');
    expect((await call(sb, 'DELETE', `${base}/plans/gold-annual`, { key })).status).toBe(204);
    const pro = await call(sb, 'DELETE', `${base}/plans/pro-monthly`, { key });
    expect(pro.status).toBe(200);
    expect(pro.json).toMatchObject({ archived: true, subscribers: 2 });

    const newKey = await call(sb, 'POST', `${base}/keys`, { key, body: { mode: 'live' } });
    expect(newKey.json).toMatchObject({
      mode: 'live',
      key: expect.stringMatching(/^live_/),
      id: expect.stringMatching(/^key_/),
    });
    expect(newKey.json.last4).toBe(newKey.json.key.slice(-4));
    const list = await call(sb, 'GET', `${base}/keys`, { key });
    expect(list.json.data).toHaveLength(3);
    expect(JSON.stringify(list.json)).not.toContain(newKey.json.key);
    expect((await call(sb, 'DELETE', `${base}/keys/${newKey.json.id}`, { key })).status).toBe(204);
    expectError(await call(sb, 'GET', '/api/v1/whoami', { key: newKey.json.key }), 401, 'unauthorized');
  });
});

describe('simulator', () => {
  it('creates users, checks entitlements and authorizes without a browser', async () => {
    sb = await startTestSandbox();
    const key = sb.seed.test_key;
    const user = await call(sb, 'POST', '/api/v1/simulator/users', {
      key,
      body: { app_id: sb.seed.app.id, plan: 'pro-monthly', status: 'trialing', name: 'Tess' },
    });
    expect(user.status).toBe(201);
    expect(user.json).toMatchObject({
      id: expect.stringMatching(/^usr_/),
      app_id: sb.seed.app.id,
      plan: 'pro-monthly',
      status: 'trialing',
    });
    const check = (user_id: string, feature: string) =>
      call(sb, 'POST', '/api/v1/simulator/entitlement-checks', {
        key,
        body: { app_id: sb.seed.app.id, user_id, feature },
      });
    expect((await check(user.json.id, 'export')).json).toMatchObject({
      allowed: true,
      reason: 'feature_in_plan',
    });
    expect((await check(sb.seed.users[1]!.id, 'export')).json).toMatchObject({
      allowed: false,
      reason: 'feature_not_in_plan',
    });
    // Past due keeps access until the grace period ends (docs/DECISIONS.md §5, the one access rule).
    expect((await check(sb.seed.users[2]!.id, 'export')).json).toMatchObject({
      allowed: true,
      reason: 'feature_in_plan',
    });
    const cancelled = await call(sb, 'PATCH', `/api/v1/simulator/users/${user.json.id}`, {
      key,
      body: { app_id: sb.seed.app.id, status: 'cancelled' },
    });
    expect(cancelled.json.status).toBe('cancelled');
    const auth = await call(sb, 'POST', '/api/v1/simulator/authorize', {
      key,
      body: { app_id: sb.seed.app.id, user_id: user.json.id },
    });
    expect(auth.json).toMatchObject({
      user_id: user.json.id,
      token_type: 'Bearer',
      scope: 'identity:read entitlements:read',
    });
    const ent = await call(sb, 'GET', '/api/v1/entitlements', { token: auth.json.access_token });
    expect(ent.json).toMatchObject({ user_id: user.json.id, status: 'cancelled' });
  });
});

describe('embedded apps', () => {
  it('passes a signed, short-lived context token, or says no embed URL is set', async () => {
    sb = await startTestSandbox();
    const user = sb.seed.users[0]!.id;
    const link = await call(sb, 'POST', `/api/v1/apps/${sb.seed.app.id}/preview-links`, {
      key: sb.seed.test_key,
      body: { user_id: user },
    });
    expect(link.status).toBe(201);
    const dashboard = link.json.url as string;
    expect(dashboard).toMatch(
      new RegExp(`^${sb.siteUrl}/dashboard/apps/${sb.seed.app.id}\\?preview=[\\w-]{43}&user_id=${user}$`),
    );
    const none = await fetch(dashboard);
    expect(await none.text()).toContain('This app has no embed URL');
    await call(sb, 'PATCH', `/api/v1/apps/${sb.seed.app.id}`, {
      key: sb.seed.test_key,
      body: { embed_url: 'https://embed.example/app?x=1' },
    });
    const html = await (await fetch(dashboard)).text();
    const src = /<iframe id="app-frame"[^>]* src="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, '&');
    const url = new URL(src);
    expect(url.origin + url.pathname).toBe('https://embed.example/app');
    expect(url.searchParams.get('x')).toBe('1');
    const { payload: claims, protectedHeader } = await jwtVerify(
      url.searchParams.get('context_token')!,
      new TextEncoder().encode(sb.seed.app.client_secret),
      { algorithms: ['HS256'], issuer: sb.siteUrl, audience: sb.seed.app.client_id },
    );
    expect(protectedHeader).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(claims).toMatchObject({ sub: user, app_id: sb.seed.app.id, nbf: claims.iat });
    expect(claims.exp! - claims.iat!).toBe(300);
    const plainHttp = await call(sb, 'PATCH', `/api/v1/apps/${sb.seed.app.id}`, {
      key: sb.seed.test_key,
      body: { embed_url: 'http://embed.example/app' },
    });
    expect(plainHttp.status).toBe(400);
    expect((await fetch(dashboard.replace(user, 'usr_other'))).status).toBe(404);
    const index = await (await fetch(`${sb.siteUrl}/`)).text();
    expect(index).toContain(sb.seed.app.client_id);
  });
});

describe('request log', () => {
  it('writes one line per request and per delivery attempt, without query strings', async () => {
    const lines: string[] = [];
    sb = await startTestSandbox({ log: (line) => lines.push(line) });
    await call(sb, 'GET', `/api/v1/entitlements?user_id=${sb.seed.users[0]!.id}`, { key: sb.seed.test_key });
    await call(sb, 'POST', '/api/v1/simulator/events', {
      key: sb.seed.test_key,
      body: { app_id: sb.seed.app.id, event: 'user.revoked' },
    });
    expect(lines[0]).toMatch(/^GET \/api\/v1\/entitlements 200 [\d.]+ms$/);
    expect(lines.some((l) => /^delivery dlv_\w+ user\.revoked/.test(l))).toBe(true);
    expect(lines.join('\n')).not.toContain(sb.seed.test_key);
  });
});
