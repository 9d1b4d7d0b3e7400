import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { developerToken as sandboxDeveloperToken, startTestSandbox } from '../support/sandbox.js';
import { call, expectError, fakeClock } from './helpers.js';

// The API's refusals, one of each error class of docs/PROTOCOL.md (the rest of the API:
// test/sandbox/api.test.ts).

let sb: Sandbox;
afterEach(async () => {
  await sb?.close();
});

const developerToken = (scopes: string[]) => sandboxDeveloperToken(sb, scopes);

describe('validation: every error class is a 4xx JSON error', () => {
  it('covers each error code of docs/PROTOCOL.md', async () => {
    sb = await startTestSandbox();
    const key = sb.seed.test_key;
    const writer = await developerToken(['apps:write']);
    const app = `/api/v1/apps/${sb.seed.app.id}`;
    expectError(await call(sb, 'POST', '/api/v1/apps', { key, body: { name: 'A' } }), 403, 'forbidden');
    expectError(
      await call(sb, 'POST', '/api/v1/apps', { token: writer, rawBody: '{"name": ' }),
      400,
      'invalid_json',
    );
    expectError(
      await call(sb, 'POST', '/api/v1/apps', { token: writer, rawBody: Buffer.from([0x7b, 0xff, 0x7d]) }),
      400,
      'invalid_json',
    );
    expectError(await call(sb, 'POST', '/api/v1/apps', { token: writer, body: [] }), 400, 'invalid_request');
    expectError(
      await call(sb, 'POST', '/api/v1/apps', { token: writer, body: { name: 5 } }),
      400,
      'invalid_request',
    );
    expectError(await call(sb, 'POST', '/api/v1/apps', { token: writer, body: {} }), 400, 'invalid_request');
    const unknown = await call(sb, 'POST', '/api/v1/apps', {
      token: writer,
      body: { name: 'A', colour: 'red' },
    });
    expectError(unknown, 400, 'invalid_request');
    expect(unknown.json.error.message).toContain('colour');
    expectError(
      await call(sb, 'POST', '/api/v1/apps', {
        token: writer,
        body: { name: 'A', redirect_uris: ['http://example.com/cb'] },
      }),
      400,
      'invalid_request',
    );
    expectError(
      await call(sb, 'POST', '/api/v1/apps', { token: writer, body: { name: 'A', webhook_url: 'ftp://x' } }),
      400,
      'invalid_request',
    );
    expectError(await call(sb, 'GET', '/api/v1/whoami'), 401, 'unauthorized');
    expectError(await call(sb, 'GET', '/api/v1/whoami', { key: 'test_nope' }), 401, 'unauthorized');
    expectError(await call(sb, 'GET', '/api/v1/whoami', { token: 'at_nope' }), 401, 'unauthorized');
    expectError(
      await call(sb, 'GET', '/api/v1/whoami', { headers: { authorization: 'Basic abc' } }),
      401,
      'unauthorized',
    );
    expectError(
      await call(sb, 'POST', '/api/v1/simulator/events', {
        key: sb.seed.live_key,
        body: { app_id: sb.seed.app.id, event: 'user.revoked' },
      }),
      403,
      'forbidden',
    );
    expectError(await call(sb, 'GET', '/api/v1/apps/app_doesnotexist', { key }), 404, 'not_found');
    expectError(await call(sb, 'GET', `${app}/plans/nope`, { key }), 404, 'not_found');
    expectError(await call(sb, 'GET', '/api/v1/nothing-here', { key }), 404, 'not_found');
    const wrongMethod = await call(sb, 'PUT', app, { key, body: {} });
    expectError(wrongMethod, 405, 'method_not_allowed');
    expect(wrongMethod.headers.get('allow')).toBe('GET, PATCH, DELETE');
    expectError(
      await call(sb, 'POST', `${app}/plans`, { key, body: { id: 'free', name: 'Free again', kind: 'free' } }),
      409,
      'conflict',
    );
    const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024) });
    expectError(
      await call(sb, 'POST', '/api/v1/apps', { token: writer, rawBody: big }),
      413,
      'payload_too_large',
    );
    expectError(
      await call(sb, 'POST', '/api/v1/apps', {
        token: writer,
        rawBody: 'name=A',
        contentType: 'application/x-www-form-urlencoded',
      }),
      415,
      'unsupported_media_type',
    );
    expectError(await call(sb, 'GET', '/api/v1/entitlements', { key }), 400, 'invalid_request');
    expectError(await call(sb, 'GET', '/api/v1/entitlements?user_id=usr_unknown', { key }), 404, 'not_found');
    expectError(await call(sb, 'GET', '/api/v1/whoami?debug=1', { key }), 400, 'invalid_request');
    expectError(await call(sb, 'GET', '/api/v1/apps?limit=0', { key }), 400, 'invalid_request');
    expectError(await call(sb, 'GET', '/api/v1/apps?cursor=garbage', { key }), 400, 'invalid_request');
  });

  it('never answers 5xx to malformed input (a sweep over every route)', async () => {
    const clock = fakeClock();
    sb = await startTestSandbox({ now: clock.now });
    const key = sb.seed.test_key;
    const app = sb.seed.app.id;
    const paths = [
      '/api/v1/whoami',
      '/api/v1/entitlements',
      '/api/v1/apps',
      `/api/v1/apps/${app}`,
      `/api/v1/apps/${app}/client-secret`,
      `/api/v1/apps/${app}/webhook-secret`,
      `/api/v1/apps/${app}/plans`,
      `/api/v1/apps/${app}/plans/pro-monthly`,
      `/api/v1/apps/${app}/keys`,
      `/api/v1/apps/${app}/keys/key_x`,
      '/api/v1/simulator/users',
      `/api/v1/simulator/users/${sb.seed.users[0]!.id}`,
      '/api/v1/simulator/events',
      '/api/v1/simulator/authorize',
      '/api/v1/simulator/entitlement-checks',
      '/api/oauth/token',
      '/oauth/authorize',
      '/api/v1/apps/%E0%A4%A',
      '/dashboard/apps/app_x',
    ];
    const bodies: unknown[] = [
      null,
      1,
      'x',
      [],
      {},
      { app_id: 7 },
      { app_id: app, event: 'user.authorized', data: { user_id: 1 } },
      { app_id: app, event: 'subscription.cancelled', data: { cancelled_at: 'yesterday' } },
      { app_id: app, event: 'user.revoked', data: [] },
      { app_id: app, plan: 'pro-monthly', status: 'sleeping' },
      { app_id: app, plan: { nested: true }, status: 'active' },
      { app_id: app, user_id: sb.seed.users[0]!.id, feature: ['x'] },
      { app_id: app, user_id: 'usr_nobody', scopes: 'identity:read' },
      { id: 'UPPER', name: 'x', kind: 'monthly' },
      { id: 'gold', name: 'Gold', kind: 'monthly', price: { amount: -1, currency: 'usd' } },
      { id: 'gold', name: 'Gold', kind: 'monthly', price: { amount: 1.5, currency: 'USD' } },
      { price: null },
      { mode: 'prod' },
      { name: '', redirect_uris: 'http://127.0.0.1/cb' },
      { embed_url: 'javascript:alert(1)' },
      { __proto__: { polluted: true }, name: 'x' },
    ];
    const failures: string[] = [];
    for (const path of paths) {
      for (const method of ['GET', 'POST', 'PATCH', 'DELETE']) {
        // Deleting the app would delete the key the sweep uses.
        if (method === 'DELETE' && path === `/api/v1/apps/${app}`) continue;
        for (const body of bodies) {
          const res = await fetch(sb.siteUrl + path, {
            method,
            headers: { 'x-api-key': key, 'content-type': 'application/json' },
            body: method === 'GET' ? undefined : JSON.stringify(body),
            redirect: 'manual',
          });
          await res.arrayBuffer();
          if (res.status >= 500) failures.push(`${method} ${path} ${JSON.stringify(body)} -> ${res.status}`);
          if (res.status === 429) return expect.fail('the sweep ran into the rate limit');
        }
      }
      // Stay under the test-key limit of 100 a minute: move the sandbox clock to the next window.
      clock.advance(60_000);
    }
    expect(failures).toEqual([]);
  });
});
