import { mkdtemp, rm } from 'node:fs/promises';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { developerToken, startTestSandbox } from '../support/sandbox.js';
import { call, type CallOptions } from './helpers.js';

// A request that fails changes nothing (docs/PROTOCOL.md, Errors): each write route is driven into a
// failure, and every table of the database is compared before and after (the sandbox stopped, the
// file read as it is on disk).

let dir: string;
let sb: Sandbox;
let writer: string;
let bare: { id: string; plan: string; key: string };

const testKey = async (appId: string) =>
  (await call(sb, 'POST', `/api/v1/apps/${appId}/keys`, { token: writer, body: { mode: 'test' } })).json
    .key as string;

/** Every row of every table, sorted, as text. */
function tables(): Record<string, string[]> {
  const db = new DatabaseSync(join(dir, 'sandbox.sqlite'), { readOnly: true });
  try {
    const names = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{
        name: string;
      }>
    ).map((r) => r.name);
    return Object.fromEntries(
      names.map((n) => [
        n,
        db
          .prepare(`SELECT * FROM "${n}"`)
          .all()
          .map((r) => JSON.stringify(r))
          .sort(),
      ]),
    );
  } finally {
    db.close();
  }
}

const restart = async () => {
  await sb.close();
  const before = tables();
  sb = await startTestSandbox({ dataDir: dir });
  return before;
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mkt-failed-writes-'));
  sb = await startTestSandbox({ dataDir: dir });
  writer = await developerToken(sb, ['apps:write']);
  // An app with no payout account and a paid plan with a trial: subscribing fails with 409.
  const app = await call(sb, 'POST', '/api/v1/apps', {
    token: writer,
    body: { name: 'Bare', redirect_uris: ['http://127.0.0.1/cb'] },
  });
  expect(app.status).toBe(201);
  const plan = await call(sb, 'POST', `/api/v1/apps/${app.json.id}/plans`, {
    token: writer,
    body: { id: 'pro', name: 'Pro', kind: 'monthly', price: { amount: 500, currency: 'USD' }, trial_days: 7 },
  });
  expect(plan.status).toBe(201);
  bare = { id: app.json.id, plan: 'pro', key: await testKey(app.json.id) };
}, 60_000);

afterAll(async () => {
  await sb?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Each write that fails: method, path, options, and the status it fails with. */
const failures = (): Array<[string, string, CallOptions, number]> => {
  const key = sb.seed.test_key;
  const app = sb.seed.app.id;
  const user = sb.seed.users[0]!.id;
  const pro = sb.seed.plans.find((p) => p.kind !== 'free')!.id;
  return [
    [
      'POST',
      '/api/v1/apps',
      { token: writer, body: { name: 'x', redirect_uris: ['javascript:alert(1)'] } },
      400,
    ],
    ['PATCH', `/api/v1/apps/${app}`, { token: writer, body: { webhook_url: 'file:///etc/passwd' } }, 400],
    ['DELETE', '/api/v1/apps/app_missing', { token: writer }, 404],
    [
      'POST',
      `/api/v1/apps/${app}/plans`,
      { token: writer, body: { id: pro, name: 'Dup', kind: 'free' } },
      409,
    ],
    ['PATCH', `/api/v1/apps/${app}/plans/${pro}`, { token: writer, body: { kind: 'annual' } }, 400],
    ['DELETE', `/api/v1/apps/${app}/plans/nope`, { token: writer }, 404],
    ['POST', `/api/v1/apps/${app}/keys`, { token: writer, body: { mode: 'prod' } }, 400],
    ['DELETE', `/api/v1/apps/${app}/keys/key_missing`, { token: writer }, 404],
    // Billing: a payment behaviour is set before the subscription that then fails.
    [
      'POST',
      '/api/v1/simulator/users',
      { key: bare.key, body: { app_id: bare.id, plan: bare.plan, payment_behaviour: 'declines' } },
      409,
    ],
    [
      'PATCH',
      `/api/v1/simulator/users/${user}`,
      { key, body: { app_id: app, payment_behaviour: 'declines', plan: 'nope' } },
      404,
    ],
    [
      'PATCH',
      `/api/v1/simulator/users/${user}`,
      { key, body: { app_id: app, payment_behaviour: 'declines', status: sb.seed.users[0]!.status } },
      409,
    ],
    ['POST', `/api/v1/simulator/users/usr_missing/cancel`, { key, body: { app_id: app } }, 404],
    [
      'POST',
      '/api/v1/simulator/events',
      { key, body: { app_id: app, event: 'subscription.created', data: { plan: 'nope' } } },
      404,
    ],
    [
      'POST',
      '/api/v1/simulator/events',
      { key: bare.key, body: { app_id: bare.id, event: 'subscription.created' } },
      409,
    ],
    [
      'POST',
      '/api/v1/simulator/authorize',
      { key, body: { app_id: app, user_id: user, scopes: ['apps:write'] } },
      403,
    ],
    ['POST', '/api/v1/simulator/clock', { key, body: { advance_s: 200 * 365 * 86_400 } }, 400],
  ];
};

describe('a request that fails', () => {
  it('leaves every table as it was, for each write route', async () => {
    for (const [method, path, options, status] of failures()) {
      const before = await restart();
      const answer = await call(sb, method, path, options);
      expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(status);
      const after = await restart();
      expect(after, `${method} ${path}`).toEqual(before);
    }
  }, 120_000);

  it('subscribes a new test user to the free plan when subscription.created is enacted on a free-only app', async () => {
    const app = await call(sb, 'POST', '/api/v1/apps', {
      token: writer,
      body: { name: 'Free only', redirect_uris: ['http://127.0.0.1/cb'] },
    });
    const id = app.json.id as string;
    const key = await testKey(id);
    await call(sb, 'POST', `/api/v1/apps/${id}/plans`, {
      token: writer,
      body: { id: 'free', name: 'Free', kind: 'free' },
    });
    for (const data of [undefined, { plan: 'free' }]) {
      const res = await call(sb, 'POST', '/api/v1/simulator/events', {
        key,
        body: { app_id: id, event: 'subscription.created', ...(data ? { data } : {}) },
      });
      expect(res.status, res.text).toBe(201);
      expect(res.json.envelope).toMatchObject({ event: 'subscription.created', data: { plan: 'free' } });
      const user = await call(
        sb,
        'GET',
        `/api/v1/simulator/users/${res.json.envelope.data.user_id}?app_id=${id}`,
        {
          key,
        },
      );
      expect(user.json).toMatchObject({ plan: 'free', status: 'active' });
    }
    const users = await call(sb, 'GET', `/api/v1/simulator/users?app_id=${id}`, { key });
    expect(users.json.data).toHaveLength(2);
  });
});
