import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { developerToken, developerTokens, startTestSandbox } from '../support/sandbox.js';
import { burstEvents, call, fakeClock, openStream } from './helpers.js';

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
    const writer = await developerToken(sb, ['apps:write']);
    const app = await call(sb, 'POST', '/api/v1/apps', { token: writer, body: { name: 'Kept' } });
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

    sb = await startTestSandbox({ dataDir });
    expect(sb.seed).toEqual(seed);
    const apps = await call(sb, 'GET', `/api/v1/apps`, { token: writer });
    expect(apps.json.data.map((a: { name: string }) => a.name)).toContain('Kept');
    expect(app.status).toBe(201);
    const me = await call(sb, 'GET', '/api/v1/whoami', { token: token.json.access_token });
    expect(me.json.id).toBe(user.json.id);
    const ent = await call(sb, 'GET', `/api/v1/entitlements?user_id=${user.json.id}`, { key });
    expect(ent.json.plan).toBe('pro-monthly');
    // Deliveries 1-3 were user.authorized (the developer's consent), subscription.created and
    // user.authorized; the three events follow.
    const stream = await openStream(sb, seed.app.id, key, '3');
    const replay = [await stream.next(), await stream.next(), await stream.next()];
    expect(replay.map((e) => e.data.delivery_id)).toEqual(events.map((e) => e.json.delivery_id));
    stream.close();
    const next = await call(sb, 'POST', '/api/v1/simulator/events', {
      key,
      body: { app_id: seed.app.id, event: 'user.revoked' },
    });
    const tail = await openStream(sb, seed.app.id, key, '6');
    expect((await tail.next()).id).toBe('7');
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
    const stream = await openStream(sb, sb.seed.app.id, sb.seed.test_key);
    expect((await stream.next()).data).toEqual({ last_id: 0 });
    stream.close();
  });

  it('expired access tokens stop working, also after a restart; the refresh token still works', async () => {
    const clock = fakeClock();
    sb = await startTestSandbox({ dataDir, now: clock.now });
    const { app, users } = sb.seed;
    const token = await call(sb, 'POST', '/api/v1/simulator/authorize', {
      key: sb.seed.test_key,
      body: { app_id: app.id, user_id: users[0]!.id },
    });
    clock.advance(3_600_000);
    const expired = await call(sb, 'GET', '/api/v1/whoami', { token: token.json.access_token });
    expect(expired.status).toBe(401);
    expect(expired.json.error.message).toContain('expired');
    await sb.close();
    sb = await startTestSandbox({ dataDir, now: clock.now });
    expect((await call(sb, 'GET', '/api/v1/whoami', { token: token.json.access_token })).status).toBe(401);
    const refreshed = await call(sb, 'POST', '/api/oauth/token', {
      body: {
        grant_type: 'refresh_token',
        refresh_token: token.json.refresh_token,
        client_id: app.client_id,
        client_secret: app.client_secret,
      },
    });
    expect(refreshed.status).toBe(200);
  });
});

describe('upgrade', () => {
  it('keeps a data folder written by the version before the log (state.json and deliveries/)', async () => {
    // Written by the previous sandbox: its seed, one more (live) key and one delivery.
    await cp(new URL('../fixtures/sandbox-v1', import.meta.url), dataDir, { recursive: true });
    const liveKey = 'live_saBvM2uAfuyoI63TVmmhnP-ENm0cT5Ps';
    for (let restart = 0; restart < 2; restart++) {
      sb = await startTestSandbox({ dataDir });
      expect(sb.seed.app.name).toBe('Sandbox App');
      expect((await call(sb, 'GET', '/api/v1/whoami', { key: liveKey })).status).toBe(200);
      const stream = await openStream(sb, sb.seed.app.id, sb.seed.test_key, '0');
      expect((await stream.next()).data.delivery_id).toBe('dlv_6f44eff46dc24b9433a2b32e');
      stream.close();
      await sb.close();
      sb = undefined;
    }
  });
});

describe('delivery history', () => {
  it('keeps the newest 10,000 deliveries per app for resume, in one database file', async () => {
    sb = await startTestSandbox({ dataDir });
    const { seed } = sb;
    const tokens = developerTokens(sb, ['apps:write']);
    // Each grant is a user.authorized delivery; 10,600 events follow (a grant may make 1,000 a
    // minute): the oldest few hundred are dropped.
    const events = 10_600;
    await burstEvents(sb, tokens, events, 32);
    const first = await openStream(sb, seed.app.id, seed.test_key, '0');
    expect((await first.next()).id).toBe(String(events + tokens.grants - 10_000 + 1));
    first.close();
    await sb.close();
    // One database (its write-ahead log is folded in on close); no log or snapshot files.
    const files = await readdir(dataDir);
    expect(files).toContain('sandbox.sqlite');
    expect(files.filter((f) => f.startsWith('log-') || f.startsWith('snapshot'))).toEqual([]);

    sb = await startTestSandbox({ dataDir });
    const again = await openStream(sb, seed.app.id, seed.test_key, '10500');
    expect((await again.next()).id).toBe('10501');
    again.close();
  }, 180_000);

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
