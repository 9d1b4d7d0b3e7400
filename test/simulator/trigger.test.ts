import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useSandbox } from '../support/sandbox.js';
import { answerWith, startServer } from '../support/server.js';

const ctx = useSandbox();
const mkt = (args: string[], extra: Record<string, string> = {}) =>
  ctx.mkt([...args, '--app', ctx.sandbox.seed.app.id], extra);

describe('mkt trigger', () => {
  it('sends an event and prints its delivery id and outcome', async () => {
    const user = ctx.sandbox.seed.users[1]!.id; // Fred, on the free plan: subscribing is a real change
    const r = await mkt([
      'trigger',
      'subscription.created',
      '--user',
      user,
      '--plan',
      'pro-monthly',
      '--json',
    ]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.delivery_id).toMatch(/^dlv_/);
    expect(doc.envelope.data).toEqual({ user_id: user, plan: 'pro-monthly' });
    expect(doc.webhook.status).toBe('no_url');
    const plain = await mkt([
      'trigger',
      'user.authorized',
      '--set',
      'data.scopes=identity:read,entitlements:read',
    ]);
    expect(plain.code).toBe(0);
    expect(plain.stdout.trim()).toMatch(/^dlv_\w+$/);
    expect(plain.stderr).toContain('No listener and no webhook URL');
  });

  it('refuses __proto__ and constructor in --data-file as unknown fields (exit 2)', async () => {
    for (const key of ['__proto__', 'constructor']) {
      const file = join(ctx.dir, `data-${key}.json`);
      await writeFile(file, `{"user_id": "usr_1", "plan": "free", "${key}": {"plan": "pro-monthly"}}`);
      const r = await mkt(['trigger', 'subscription.created', '--data-file', file, '--dry-run']);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`has no field "${key}"`);
    }
  });

  it('prints the exact envelope with --dry-run --synthetic and sends nothing', async () => {
    const r = await mkt([
      'trigger',
      'subscription.cancelled',
      '--user',
      'usr_abc',
      '--plan',
      'pro-monthly',
      '--dry-run',
      '--synthetic',
      '--set',
      'cancelled_at=2030-01-01T00:00:00Z',
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      event: 'subscription.cancelled',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      data: { user_id: 'usr_abc', plan: 'pro-monthly', cancelled_at: '2030-01-01T00:00:00Z' },
    });
  });

  it('lists the four events when none is named (exit 2)', async () => {
    const none = await mkt(['trigger']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(
      'Name the event to send. Events: user.authorized, subscription.created, subscription.cancelled, user.revoked.',
    );
    expect(none.stderr).toContain('Try: mkt trigger subscription.created');
    expect(none.stderr).not.toMatch(/required arg|Note:/);
  });

  it('rejects unknown events and fields with the valid ones (exit 2)', async () => {
    const event = await mkt(['trigger', 'user.deleted']);
    expect(event.code).toBe(2);
    expect(event.stderr).toContain(
      'user.authorized, subscription.created, subscription.cancelled, user.revoked',
    );
    const field = await mkt(['trigger', 'subscription.created', '--set', 'data.amount=5']);
    expect(field.code).toBe(2);
    expect(field.stderr).toContain('Its fields are: user_id, plan');
    const plan = await mkt(['trigger', 'user.revoked', '--plan', 'pro']);
    expect(plan.code).toBe(2);
  });

  it('refuses a live key before making any request (exit 4)', async () => {
    const server = await startServer(answerWith(500));
    const { url, seen } = server;
    for (const args of [
      ['trigger', 'user.revoked'],
      ['simulator', 'check', '--user', 'usr_1', '--feature', 'x'],
    ]) {
      const r = await mkt(args, { MKT_SITE_URL: url, MKT_API_KEY: 'live_abcdef' });
      expect(r.code).toBe(4);
      expect(r.stderr).toContain('live_');
    }
    await server.close();
    expect(seen).toEqual([]);
  });
});

describe('mkt trigger enacts the event it sends', () => {
  it('subscribes: the webhook and GET /entitlements agree (the plan the event names is the plan)', async () => {
    const user = JSON.parse(
      (await mkt(['simulator', 'users', 'create', '--plan', 'free', '--json'])).stdout,
    ).id;
    const sent = await mkt([
      'trigger',
      'subscription.created',
      '--user',
      user,
      '--plan',
      'pro-monthly',
      '--json',
    ]);
    expect(sent.code, sent.stderr).toBe(0);
    expect(JSON.parse(sent.stdout).transition).toMatchObject({ transition: 'plan_changed', to: 'active' });
    const ent = JSON.parse((await ctx.mkt(['entitlements', '--user', user, '--json'])).stdout);
    expect(ent).toMatchObject({ plan: 'pro-monthly', status: 'active' });
    const cancel = await mkt(['trigger', 'subscription.cancelled', '--user', user, '--json']);
    expect(JSON.parse(cancel.stdout).envelope.data).toMatchObject({
      user_id: user,
      plan: 'pro-monthly',
      reason: 'requested',
    });
    const after = JSON.parse((await ctx.mkt(['entitlements', '--user', user, '--json'])).stdout);
    expect(after).toMatchObject({ status: 'cancelled', expires_at: ent.expires_at });
  });

  it('refuses what contradicts the state, with what to do, and sends nothing', async () => {
    const ghost = await mkt(['trigger', 'subscription.cancelled', '--user', 'usr_nonexistent123']);
    expect(ghost.code).toBe(1);
    expect(ghost.stderr).toContain('No test user "usr_nonexistent123"');
    expect(ghost.stderr).toContain('mkt simulator users list');
    const free = JSON.parse(
      (await mkt(['simulator', 'users', 'create', '--plan', 'free', '--json'])).stdout,
    ).id;
    const notPaid = await mkt(['trigger', 'subscription.cancelled', '--user', free]);
    expect(notPaid.code).toBe(1);
    expect(notPaid.stderr).toContain('cannot be cancelled');
    const noPlan = await mkt(['trigger', 'subscription.created', '--user', free, '--plan', 'platinum']);
    expect(noPlan.code).toBe(1);
    expect(noPlan.stderr).toContain('No plan "platinum"');
    const same = await mkt(['trigger', 'subscription.created', '--user', free, '--plan', 'free']);
    expect(same.code).toBe(1);
    expect(same.stderr).toContain('already on plan "free"');
  });

  it('--synthetic sends the payload as given, marked X-Marketplace-Simulated, and changes nothing', async () => {
    const receiver = await startServer(answerWith(200));
    const patch = (url: string | null) =>
      fetch(`${ctx.sandbox.siteUrl}/api/v1/apps/${ctx.sandbox.seed.app.id}`, {
        method: 'PATCH',
        headers: { 'x-api-key': ctx.sandbox.seed.test_key, 'content-type': 'application/json' },
        body: JSON.stringify({ webhook_url: url }),
      });
    try {
      await patch(receiver.url);
      const user = ctx.sandbox.seed.users[1]!.id;
      const before = JSON.parse((await ctx.mkt(['entitlements', '--user', user, '--json'])).stdout);
      const r = await mkt([
        'trigger',
        'subscription.cancelled',
        '--synthetic',
        '--user',
        user,
        '--plan',
        'legacy',
        '--json',
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).transition).toBeNull();
      const [hit] = await receiver.waitFor(1);
      expect(hit!.headers['x-marketplace-simulated']).toBe('synthetic');
      expect(JSON.parse(hit!.body).data).toMatchObject({ user_id: user, plan: 'legacy' });
      expect(JSON.parse((await ctx.mkt(['entitlements', '--user', user, '--json'])).stdout)).toEqual(before);
    } finally {
      await patch(null);
      await receiver.close();
    }
  });
});

describe('mkt simulator', () => {
  it('creates a user, authorizes it and checks a feature (exit 0 allowed, 3 not)', async () => {
    const created = await mkt(['simulator', 'users', 'create', '--plan', 'free', '--json']);
    expect(created.code).toBe(0);
    const user = JSON.parse(created.stdout);
    expect(user).toMatchObject({ plan: 'free', status: 'active', id: expect.stringMatching(/^usr_/) });
    const auth = await mkt(['simulator', 'authorize', '--user', user.id, '--json']);
    expect(auth.code).toBe(0);
    expect(JSON.parse(auth.stdout).access_token).toMatch(/^at_/);
    expect(auth.stderr).not.toContain('at_');
    const no = await mkt(['simulator', 'check', '--user', user.id, '--feature', 'no-such-feature', '--json']);
    expect(no.code).toBe(3);
    expect(JSON.parse(no.stdout)).toMatchObject({ allowed: false, reason: 'feature_not_in_plan' });
  });
});

describe('test users made without a name', () => {
  it('are told apart: each default name ends with the end of its id', async () => {
    const made = [];
    for (let i = 0; i < 2; i++) {
      const r = await mkt(['simulator', 'users', 'create', '--plan', 'free', '--json']);
      expect(r.code, r.stderr).toBe(0);
      made.push(JSON.parse(r.stdout) as { id: string; name: string });
    }
    for (const u of made) expect(u.name).toBe(`Test User ${u.id.slice(-4)}`);
    expect(made[0]!.name).not.toBe(made[1]!.name);
  });
});
