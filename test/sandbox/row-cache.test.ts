import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { developerToken, startTestSandbox } from '../support/sandbox.js';
import { call } from './helpers.js';

// The sandbox keeps the rows most requests read (subscriptions, plans, payment behaviours, keys,
// tokens) in memory: each read below comes right after a write of the row it shows, and must show
// the write, never what an earlier read left in memory.

let sb: Sandbox;
afterEach(async () => {
  await sb?.close();
});

describe('what the sandbox reads after a write', () => {
  it('shows a changed plan, a changed subscription and a forced status at once', async () => {
    sb = await startTestSandbox();
    const key = sb.seed.test_key;
    const app = sb.seed.app.id;
    const token = await developerToken(sb, ['apps:write']);
    const user = await call(sb, 'POST', '/api/v1/simulator/users', {
      key,
      body: { app_id: app, plan: 'pro-monthly' },
    });
    expect(user.status).toBe(201);
    const entitlement = async () =>
      (await call(sb, 'GET', `/api/v1/entitlements?user_id=${user.json.id}`, { key })).json;
    const before = await entitlement();
    expect(before).toMatchObject({ plan: 'pro-monthly', status: 'active' });

    const patched = await call(sb, 'PATCH', `/api/v1/apps/${app}/plans/pro-monthly`, {
      token,
      body: { features: ['only-this'], api_call_limit: 7 },
    });
    expect(patched.status).toBe(200);
    expect(await entitlement()).toMatchObject({ features: ['only-this'], usage: { limit: 7 } });
    const plan = await call(sb, 'GET', `/api/v1/apps/${app}/plans/pro-monthly`, { token });
    expect(plan.json).toMatchObject({ features: ['only-this'], api_call_limit: 7 });

    const moved = await call(sb, 'PATCH', `/api/v1/simulator/users/${user.json.id}`, {
      key,
      body: { app_id: app, plan: 'free' },
    });
    expect(moved.status).toBe(200);
    expect(await entitlement()).toMatchObject({ plan: 'free', status: 'active' });

    const declined = await call(sb, 'PATCH', `/api/v1/simulator/users/${user.json.id}`, {
      key,
      body: { app_id: app, plan: 'pro-monthly', payment_behaviour: 'declines' },
    });
    expect(declined.status).toBe(402);
    const view = await call(sb, 'GET', `/api/v1/simulator/users/${user.json.id}?app_id=${app}`, { key });
    // A request that fails changes nothing: the behaviour it set before the declined charge is undone.
    expect(view.json).toMatchObject({ plan: 'free', payment_behaviour: 'succeeds' });
  });

  it('counts each request of a user token in the usage it answers, and forgets a deleted key', async () => {
    sb = await startTestSandbox();
    const key = sb.seed.test_key;
    const app = sb.seed.app.id;
    const user = await call(sb, 'POST', '/api/v1/simulator/users', {
      key,
      body: { app_id: app, plan: 'pro-monthly' },
    });
    const auth = await call(sb, 'POST', '/api/v1/simulator/authorize', {
      key,
      body: { app_id: app, user_id: user.json.id },
    });
    const calls: number[] = [];
    for (let i = 0; i < 3; i++)
      calls.push(
        (await call(sb, 'GET', '/api/v1/entitlements', { token: auth.json.access_token })).json.usage
          .api_calls,
      );
    expect(calls).toEqual([1, 2, 3]);

    const revoked = await call(sb, 'POST', `/api/v1/simulator/users/${user.json.id}/revoke`, {
      key,
      body: { app_id: app },
    });
    expect(revoked.status).toBe(200);
    expect((await call(sb, 'GET', '/api/v1/entitlements', { token: auth.json.access_token })).status).toBe(
      401,
    );

    const token = await developerToken(sb, ['apps:write']);
    const extra = await call(sb, 'POST', `/api/v1/apps/${app}/keys`, { token, body: { mode: 'test' } });
    expect((await call(sb, 'GET', '/api/v1/whoami', { key: extra.json.key })).status).toBe(200);
    expect((await call(sb, 'DELETE', `/api/v1/apps/${app}/keys/${extra.json.id}`, { token })).status).toBe(
      204,
    );
    expect((await call(sb, 'GET', '/api/v1/whoami', { key: extra.json.key })).status).toBe(401);
  });
});
