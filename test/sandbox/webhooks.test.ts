import { verify } from '@octokit/webhooks-methods';
import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { MAX_PER_DESTINATION } from '../../src/sandbox/kernel/deliveries/dispatcher.js';
import { startTestSandbox } from '../support/sandbox.js';
import { call, openStream } from './helpers.js';
import { answerWith, startServer, type TestServer } from '../support/server.js';

let sb: Sandbox;
let receiver: TestServer | undefined;
afterEach(async () => {
  await sb?.close();
  await receiver?.close();
  receiver = undefined;
});

async function pointWebhookAt(url: string): Promise<void> {
  const res = await call(sb, 'PATCH', `/api/v1/apps/${sb.seed.app.id}`, {
    key: sb.seed.test_key,
    body: { webhook_url: url },
  });
  expect(res.status).toBe(200);
}

function simulate(event: string, data?: unknown) {
  return call(sb, 'POST', '/api/v1/simulator/events', {
    key: sb.seed.test_key,
    body: data === undefined ? { app_id: sb.seed.app.id, event } : { app_id: sb.seed.app.id, event, data },
  });
}

describe('webhook deliveries', () => {
  it('signs each delivery so @octokit/webhooks-methods verifies it with the whsec_ string', async () => {
    receiver = await startServer(answerWith(200));
    sb = await startTestSandbox();
    await pointWebhookAt(receiver.url);
    const user = sb.seed.users[1]!.id; // Fred, on the free plan: the event is enacted, so it must be a change
    const answer = await simulate('subscription.created', { user_id: user, plan: 'pro-monthly' });
    expect(answer.status).toBe(201);
    expect(answer.json).toMatchObject({
      delivery_id: expect.stringMatching(/^dlv_/),
      event: 'subscription.created',
      envelope: { event: 'subscription.created', data: { user_id: user, plan: 'pro-monthly' } },
      webhook: { url: receiver.url, status: 'delivered', response_status: 200, error: null },
      listeners: 0,
    });
    const [hit] = await receiver.waitFor(1);
    expect(hit!.headers['content-type']).toBe('application/json');
    expect(hit!.headers['user-agent']).toMatch(/^mkt-sandbox\//);
    expect(hit!.headers['x-marketplace-delivery']).toBe(answer.json.delivery_id);
    expect(hit!.headers['x-marketplace-event']).toBe('subscription.created');
    const signature = hit!.headers['x-marketplace-signature'] as string;
    expect(signature).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(await verify(sb.seed.app.webhook_secret, hit!.body, signature)).toBe(true);
    expect(await verify('whsec_other', hit!.body, signature)).toBe(false);
    const body = JSON.parse(hit!.body);
    expect(Object.keys(body)).toEqual(['event', 'timestamp', 'data']);
    expect(Math.abs(Date.parse(body.timestamp) - Date.now())).toBeLessThan(60_000);
  });

  it('fills CONTRACT payloads and rejects malformed event data', async () => {
    sb = await startTestSandbox();
    const cancelled = await simulate('subscription.cancelled');
    expect(cancelled.json.envelope.data).toEqual({
      user_id: sb.seed.users[0]!.id,
      plan: 'pro-monthly',
      cancelled_at: expect.stringMatching(/Z$/),
      reason: 'requested',
    });
    expect(cancelled.json.webhook).toEqual({
      url: null,
      status: 'no_url',
      response_status: null,
      error: null,
    });
    const revoked = await simulate('user.revoked');
    // Ada never authorized the app, so the revocation carries no scopes.
    expect(revoked.json.envelope.data).toEqual({
      user_id: sb.seed.users[0]!.id,
      app_id: sb.seed.app.id,
      scopes: [],
    });
    for (const bad of [
      simulate('user.deleted'),
      simulate('subscription.created', { user_id: 'usr_a', plan: 'pro-monthly', extra: 1 }),
      simulate('subscription.created', { user_id: 42 }),
      simulate('user.authorized', { scopes: ['root'] }),
      simulate('subscription.cancelled', { cancelled_at: 'soon' }),
    ]) {
      const res = await bad;
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe('invalid_request');
    }
  });

  it('retries a failing endpoint with backoff, the same delivery id and the same bytes', async () => {
    receiver = await startServer(answerWith((n) => (n <= 2 ? 500 : 204)));
    sb = await startTestSandbox({ deliveryBackoffMs: [10, 20, 40, 80, 160] });
    await pointWebhookAt(receiver.url);
    const answer = await simulate('user.authorized');
    expect(answer.json.webhook).toMatchObject({ status: 'failed', response_status: 500, error: 'HTTP 500' });
    const hits = await receiver.waitFor(3);
    expect(new Set(hits.map((h) => h.headers['x-marketplace-delivery']))).toEqual(
      new Set([answer.json.delivery_id]),
    );
    expect(new Set(hits.map((h) => h.body)).size).toBe(1);
    expect(new Set(hits.map((h) => h.headers['x-marketplace-signature'])).size).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.seen).toHaveLength(3);
  });

  it('gives up after six tries in all and treats an unreachable URL as a failure', async () => {
    receiver = await startServer(answerWith(() => 503));
    sb = await startTestSandbox({ deliveryBackoffMs: [5, 5, 5, 5, 5] });
    await pointWebhookAt(receiver.url);
    await simulate('user.revoked');
    await receiver.waitFor(6);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.seen).toHaveLength(6);
    const closed = await startServer(answerWith(200));
    const deadUrl = closed.url;
    await closed.close();
    await pointWebhookAt(deadUrl);
    const answer = await simulate('user.revoked');
    expect(answer.json.webhook).toMatchObject({
      status: 'failed',
      response_status: null,
      error: expect.any(String),
    });
  });

  it('a slow endpoint counts as failed after the delivery timeout', async () => {
    sb = await startTestSandbox({ deliveryTimeoutMs: 100, deliveryBackoffMs: [] });
    // A server that accepts the request and never answers.
    const silent = await startServer(() => {});
    await pointWebhookAt(`${silent.url}/slow`);
    const answer = await simulate('user.revoked');
    expect(answer.json.webhook).toMatchObject({ status: 'failed', error: 'no answer within 100 ms' });
    await silent.close();
  });

  it('counts an answer whose body never ends by its status, with the start of the body', async () => {
    sb = await startTestSandbox({ deliveryTimeoutMs: 300, deliveryBackoffMs: [] });
    receiver = await startServer((_req, res) => {
      res.writeHead(202, { 'content-type': 'text/plain' });
      res.write('accepted, still writing');
    });
    await pointWebhookAt(receiver.url);
    const answer = await simulate('user.revoked');
    expect(answer.json.webhook).toMatchObject({ status: 'delivered', response_status: 202, error: null });
    const delivery = await call(
      sb,
      'GET',
      `/api/v1/apps/${sb.seed.app.id}/deliveries/${answer.json.delivery_id}`,
      {
        key: sb.seed.test_key,
      },
    );
    expect(delivery.json.attempts).toEqual([
      expect.objectContaining({ status: 202, response_excerpt: 'accepted, still writing' }),
    ]);
  });

  it('emits subscription.created and subscription.cancelled for simulator users', async () => {
    receiver = await startServer(answerWith(200));
    sb = await startTestSandbox();
    await pointWebhookAt(receiver.url);
    const user = await call(sb, 'POST', '/api/v1/simulator/users', {
      key: sb.seed.test_key,
      body: { app_id: sb.seed.app.id, plan: 'pro-monthly', status: 'active', email: 'new@sandbox.test' },
    });
    await receiver.waitFor(1);
    await call(sb, 'PATCH', `/api/v1/simulator/users/${user.json.id}`, {
      key: sb.seed.test_key,
      body: { app_id: sb.seed.app.id, status: 'cancelled' },
    });
    const hits = await receiver.waitFor(2);
    const events = hits.map((h) => JSON.parse(h.body));
    expect(events[0]).toMatchObject({
      event: 'subscription.created',
      data: { user_id: user.json.id, plan: 'pro-monthly' },
    });
    expect(events[1]).toMatchObject({
      event: 'subscription.cancelled',
      data: { user_id: user.json.id, plan: 'pro-monthly', cancelled_at: expect.any(String) },
    });
    // A free plan starts no paid subscription: no event.
    await call(sb, 'POST', '/api/v1/simulator/users', {
      key: sb.seed.test_key,
      body: { app_id: sb.seed.app.id, plan: 'free', status: 'active' },
    });
    await simulate('user.revoked');
    const after = await receiver.waitFor(3);
    expect(JSON.parse(after[2]!.body).event).toBe('user.revoked');
  });

  it('sends a burst of deliveries at most 8 at a time, every one once', async () => {
    // A receiver that takes 40 ms per request and counts how many it holds at once.
    let open = 0;
    let most = 0;
    receiver = await startServer((_req, res) => {
      most = Math.max(most, ++open);
      setTimeout(() => {
        open--;
        res.writeHead(200).end();
      }, 40);
    });
    sb = await startTestSandbox();
    // 20 trials whose card is declined: after the retries, all 20 end in the same advance.
    for (let i = 0; i < 20; i++) {
      const created = await call(sb, 'POST', '/api/v1/simulator/users', {
        key: sb.seed.test_key,
        body: { app_id: sb.seed.app.id, plan: 'pro-monthly', trial_days: 1, payment_behaviour: 'declines' },
      });
      expect(created.status).toBe(201);
    }
    await pointWebhookAt(receiver.url);
    const advanced = await call(sb, 'POST', '/api/v1/simulator/clock', {
      key: sb.seed.test_key,
      body: { advance_s: 30 * 86_400 },
    });
    expect(advanced.status).toBe(200);
    // (A seeded subscription may end in the same month.)
    const sent = advanced.json.transitions.flatMap((t: { events: unknown[] }) => t.events);
    expect(sent.length).toBeGreaterThanOrEqual(20);
    const hits = await receiver.waitFor(sent.length);
    const ids = hits.map((h) => h.headers['x-marketplace-delivery']);
    expect(new Set(ids).size).toBe(sent.length);
    expect(hits.map((h) => JSON.parse(h.body).event).sort()).toEqual(
      sent.map((e: { event: string }) => e.event).sort(),
    );
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(8);
  });

  it('sends a triggered event at once, even while a burst waits for a server that does not answer', async () => {
    receiver = await startServer(() => {}); // holds every request
    sb = await startTestSandbox({ deliveryTimeoutMs: 10_000, deliveryBackoffMs: [] });
    for (let i = 0; i < 12; i++) {
      await call(sb, 'POST', '/api/v1/simulator/users', {
        key: sb.seed.test_key,
        body: { app_id: sb.seed.app.id, plan: 'pro-monthly', trial_days: 1, payment_behaviour: 'declines' },
      });
    }
    await pointWebhookAt(receiver.url);
    await call(sb, 'POST', '/api/v1/simulator/clock', {
      key: sb.seed.test_key,
      body: { advance_s: 30 * 86_400 },
    });
    // One destination holds at most MAX_PER_DESTINATION of the 8 places.
    await receiver.waitFor(MAX_PER_DESTINATION);
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.seen).toHaveLength(MAX_PER_DESTINATION); // the rest of the burst waits for a place
    const triggered = simulate('user.revoked');
    const hits = await receiver.waitFor(MAX_PER_DESTINATION + 1, 3_000);
    expect(JSON.parse(hits[MAX_PER_DESTINATION]!.body).event).toBe('user.revoked');
    // The server goes away: the trigger is answered with the failed attempt.
    await receiver.close();
    receiver = undefined;
    expect((await triggered).json.webhook).toMatchObject({ status: 'failed', response_status: null });
  });
});

describe('relay stream', () => {
  it('streams signed deliveries and resumes after Last-Event-ID', async () => {
    sb = await startTestSandbox();
    const key = sb.seed.test_key;
    const live = await openStream(sb, sb.seed.app.id, key);
    expect(live.status).toBe(200);
    expect(live.contentType).toContain('text/event-stream');
    // Without Last-Event-ID: the position first (no deliveries yet: 0), then live deliveries.
    expect(await live.next()).toEqual({ id: '0', event: 'position', data: { last_id: 0 } });
    const first = await simulate('user.authorized');
    expect(first.json.listeners).toBe(1);
    const e1 = await live.next();
    expect(e1).toMatchObject({ id: '1', event: 'delivery', data: { delivery_id: first.json.delivery_id } });
    expect(e1.data.headers['x-marketplace-delivery']).toBe(first.json.delivery_id);
    expect(
      await verify(sb.seed.app.webhook_secret, e1.data.body, e1.data.headers['x-marketplace-signature']!),
    ).toBe(true);
    expect(JSON.parse(e1.data.body)).toEqual(first.json.envelope);
    live.close();

    const missed = [
      await simulate('subscription.created'),
      await simulate('subscription.cancelled'),
      await simulate('user.revoked'),
    ];
    const resumed = await openStream(sb, sb.seed.app.id, key, '1');
    const got = [await resumed.next(), await resumed.next(), await resumed.next()];
    expect(got.map((e) => e.id)).toEqual(['2', '3', '4']);
    expect(got.map((e) => e.data.delivery_id)).toEqual(missed.map((m) => m.json.delivery_id));
    const next = await simulate('user.authorized');
    expect((await resumed.next()).data.delivery_id).toBe(next.json.delivery_id);
    resumed.close();

    // A new client without Last-Event-ID gets no history: its position, then only what happens next.
    const fresh = await openStream(sb, sb.seed.app.id, key);
    expect(await fresh.next()).toEqual({ id: '5', event: 'position', data: { last_id: 5 } });
    const live2 = await simulate('subscription.created');
    expect(await fresh.next()).toMatchObject({
      id: '6',
      event: 'delivery',
      data: { delivery_id: live2.json.delivery_id },
    });
    fresh.close();
    // Last-Event-ID: 0 means "everything": all six.
    const all = await openStream(sb, sb.seed.app.id, key, '0');
    const everything: string[] = [];
    for (let i = 0; i < 6; i++) everything.push((await all.next()).id);
    expect(everything).toEqual(['1', '2', '3', '4', '5', '6']);
    all.close();
    // A Last-Event-ID beyond the newest delivery (the sandbox was reset): the position again.
    const ahead = await openStream(sb, sb.seed.app.id, key, '99');
    expect(await ahead.next()).toEqual({ id: '6', event: 'position', data: { last_id: 6 } });
    ahead.close();

    const bad = await call(sb, 'GET', `/api/v1/apps/${sb.seed.app.id}/webhooks/stream`, {
      key,
      headers: { 'last-event-id': 'yesterday' },
    });
    expect(bad.status).toBe(400);
    const other = await call(sb, 'GET', `/api/v1/apps/app_unknown/webhooks/stream`, { key });
    expect(other.status).toBe(404);
  });
});
