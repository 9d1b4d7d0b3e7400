import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { startTestSandbox } from '../support/sandbox.js';
import { call, fakeClock, openStream } from './helpers.js';

let dataDir: string;
let sb: Sandbox | undefined;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'mkt-sandbox-persist-'));
});
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await rm(dataDir, { recursive: true, force: true });
});

describe('persistence', () => {
  it('keeps the seed, changes, tokens and delivery history across a restart', async () => {
    sb = await startTestSandbox({ dataDir });
    const seed = sb.seed;
    const key = seed.test_key;
    const app = await call(sb, 'POST', '/api/v1/apps', { key, body: { name: 'Kept' } });
    const user = await call(sb, 'POST', '/api/v1/simulator/users', {
      key,
      body: { app_id: seed.app.id, plan: 'pro-monthly', status: 'active' },
    });
    const token = await call(sb, 'POST', '/api/v1/simulator/authorize', {
      key,
      body: { app_id: seed.app.id, user_id: user.json.id },
    });
    const events = [];
    for (let i = 0; i < 3; i++) {
      events.push(
        await call(sb, 'POST', '/api/v1/simulator/events', {
          key,
          body: { app_id: seed.app.id, event: 'user.revoked' },
        }),
      );
    }
    await sb.close();
    const files = await readdir(dataDir);
    expect(files.filter((f) => f.endsWith('.tmp'))).toEqual([]);
    JSON.parse(await readFile(join(dataDir, 'state.json'), 'utf8'));

    sb = await startTestSandbox({ dataDir });
    expect({ ...sb.seed, siteUrl: '' }).toEqual({ ...seed, siteUrl: '' });
    expect(
      (await call(sb, 'GET', `/api/v1/apps`, { key })).json.data.map((a: { name: string }) => a.name),
    ).toContain('Kept');
    expect(app.status).toBe(201);
    const me = await call(sb, 'GET', '/api/v1/whoami', { token: token.json.access_token });
    expect(me.json.id).toBe(user.json.id);
    const ent = await call(sb, 'GET', `/api/v1/entitlements?user_id=${user.json.id}`, { key });
    expect(ent.json.plan).toBe('pro-monthly');
    // Deliveries 1 and 2 were subscription.created and user.authorized; the three events follow.
    const stream = await openStream(sb, seed.app.id, key, '2');
    const replay = [await stream.next(), await stream.next(), await stream.next()];
    expect(replay.map((e) => e.data.delivery_id)).toEqual(events.map((e) => e.json.delivery_id));
    stream.close();
    const next = await call(sb, 'POST', '/api/v1/simulator/events', {
      key,
      body: { app_id: seed.app.id, event: 'user.revoked' },
    });
    const tail = await openStream(sb, seed.app.id, key, '5');
    expect((await tail.next()).id).toBe('6');
    expect(next.status).toBe(201);
    tail.close();
  });

  it('reset wipes the state and seeds fresh secrets', async () => {
    sb = await startTestSandbox({ dataDir });
    const old = sb.seed;
    await call(sb, 'POST', '/api/v1/simulator/events', {
      key: old.test_key,
      body: { app_id: old.app.id, event: 'user.revoked' },
    });
    await sb.close();
    sb = await startTestSandbox({ dataDir, reset: true });
    expect(sb.seed.app.client_secret).not.toBe(old.app.client_secret);
    expect(sb.seed.test_key).not.toBe(old.test_key);
    expect(sb.seed.app.webhook_secret).toMatch(/^whsec_/);
    expect((await call(sb, 'GET', '/api/v1/whoami', { key: old.test_key })).status).toBe(401);
    expect(await readdir(dataDir)).not.toContain('deliveries');
  });

  it('expired access tokens stop working and are not persisted', async () => {
    const clock = fakeClock();
    sb = await startTestSandbox({ dataDir, now: clock.now });
    const token = await call(sb, 'POST', '/api/v1/simulator/authorize', {
      key: sb.seed.test_key,
      body: { app_id: sb.seed.app.id, user_id: sb.seed.users[0]!.id },
    });
    clock.advance(3_600_000);
    const expired = await call(sb, 'GET', '/api/v1/whoami', { token: token.json.access_token });
    expect(expired.status).toBe(401);
    expect(expired.json.error.message).toContain('expired');
    await sb.close();
    sb = undefined;
    const state = await readFile(join(dataDir, 'state.json'), 'utf8');
    expect(state).not.toContain(token.json.access_token);
    expect(state).toContain(token.json.refresh_token);
  });
});

describe('delivery history', () => {
  it('keeps the newest 10,000 deliveries per app for resume, and compacts the log on restart', async () => {
    sb = await startTestSandbox({ dataDir });
    const { seed } = sb;
    const token = await call(sb, 'POST', '/api/v1/simulator/authorize', {
      key: seed.test_key,
      body: { app_id: seed.app.id, user_id: seed.developer.id, scopes: ['apps:write'] },
    });
    // Delivery 1 was user.authorized; 20,500 more follow (a token is not key-limited).
    const total = 20_501;
    let sent = 1;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (sent < total) {
          sent++;
          const res = await call(sb!, 'POST', '/api/v1/simulator/events', {
            token: token.json.access_token,
            body: { app_id: seed.app.id, event: 'user.revoked' },
          });
          expect(res.status).toBe(201);
        }
      }),
    );
    const first = await openStream(sb, seed.app.id, seed.test_key, '0');
    expect((await first.next()).id).toBe(String(total - 10_000 + 1));
    first.close();
    await sb.close();
    const logFile = join(dataDir, 'deliveries', `${seed.app.id}.jsonl`);
    expect((await readFile(logFile, 'utf8')).split('\n').filter(Boolean)).toHaveLength(total);

    sb = await startTestSandbox({ dataDir });
    const again = await openStream(sb, seed.app.id, seed.test_key, '20000');
    expect((await again.next()).id).toBe('20001');
    again.close();
    await sb.close();
    sb = undefined;
    expect((await readFile(logFile, 'utf8')).split('\n').filter(Boolean)).toHaveLength(10_000);
  }, 60_000);

  it('close() ends relay streams', async () => {
    sb = await startTestSandbox({ dataDir });
    const stream = await openStream(sb, sb.seed.app.id, sb.seed.test_key);
    // A client without Last-Event-ID is told its position first (docs/PROTOCOL.md, relay stream).
    expect((await stream.next()).event).toBe('position');
    await sb.close();
    sb = undefined;
    await expect(stream.next()).rejects.toThrow('stream ended');
  });
});
