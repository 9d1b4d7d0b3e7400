import { appendFile, cp, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { tempDir } from '../support/cli.js';
import {
  developerToken,
  killAllSandboxProcesses,
  startSandboxProcess,
  type SandboxProcess,
} from '../support/sandbox.js';
import { call, openStream, submitConsent, type StreamEvent } from './helpers.js';
import { answerWith, startServer } from '../support/server.js';

// Every test here runs the real `mkt sandbox start`, kills it with SIGKILL right after an answer,
// and starts it again on the same data folder (docs/DECISIONS.md §2, durability).
const CRASHES = 3;

let dir: { path: string; remove(): Promise<void> };
let dataDir: string;
beforeEach(async () => {
  dir = await tempDir();
  dataDir = join(dir.path, 'sandbox');
});
afterEach(async () => {
  killAllSandboxProcesses();
  await dir.remove();
});

const start = (umask?: string) => startSandboxProcess(dataDir, dir.path, { umask });
/** The process as the `call` helper addresses a sandbox. */
const peer = (p: SandboxProcess) => p as unknown as Sandbox;

/** Reads the relay from the start (Last-Event-ID 0) until `count` deliveries arrived. */
async function history(p: SandboxProcess, count: number): Promise<StreamEvent[]> {
  const stream = await openStream(peer(p), p.seed.app.id, p.seed.test_key, '0');
  const events: StreamEvent[] = [];
  while (events.length < count) events.push(await stream.next());
  stream.close();
  return events;
}

describe('an acknowledged write survives kill -9', () => {
  it('a new key, a rotated client secret and a rotated webhook secret', async () => {
    let p = await start();
    const seed = p.seed;
    const writer = await developerToken(p, ['apps:write']);
    for (let i = 0; i < CRASHES; i++) {
      const key = await call(peer(p), 'POST', `/api/v1/apps/${seed.app.id}/keys`, {
        key: seed.test_key,
        body: { mode: 'test' },
      });
      expect(key.status).toBe(201);
      await p.kill9();
      p = await start();
      expect((await call(peer(p), 'GET', '/api/v1/whoami', { key: key.json.key })).status).toBe(200);

      const rotated = await call(peer(p), 'POST', `/api/v1/apps/${seed.app.id}/client-secret`, {
        token: writer,
      });
      expect(rotated.status).toBe(200);
      await p.kill9();
      p = await start();
      // Client authentication passes with the new secret (the refresh token itself is unknown).
      const auth = await call(peer(p), 'POST', '/api/oauth/token', {
        body: {
          grant_type: 'refresh_token',
          refresh_token: 'rt_unknown',
          client_id: seed.app.client_id,
          client_secret: rotated.json.client_secret,
        },
      });
      expect(auth.json).toMatchObject({ error: 'invalid_grant' });

      const secret = await call(peer(p), 'POST', `/api/v1/apps/${seed.app.id}/webhook-secret`, {
        key: seed.test_key,
      });
      expect(secret.status).toBe(200);
      await p.kill9();
      p = await start();
      const read = await call(peer(p), 'GET', `/api/v1/apps/${seed.app.id}/webhook-secret`, {
        key: seed.test_key,
      });
      expect(read.json.webhook_secret).toBe(secret.json.webhook_secret);
    }
  }, 120_000);

  it('a refresh rotation, and reuse detection across restarts', async () => {
    let p = await start();
    const { app, users } = p.seed;
    const redirect = 'http://127.0.0.1:9/callback';
    const consent = await submitConsent(peer(p), {
      client_id: app.client_id,
      redirect_uri: redirect,
      user_id: users[0]!.id,
    });
    const client = { client_id: app.client_id, client_secret: app.client_secret };
    let tokens = await call(peer(p), 'POST', '/api/oauth/token', {
      body: {
        grant_type: 'authorization_code',
        code: consent.location!.searchParams.get('code'),
        redirect_uri: redirect,
        ...client,
      },
    });
    const spent: string[] = [];
    for (let i = 0; i < CRASHES; i++) {
      const next = await call(peer(p), 'POST', '/api/oauth/token', {
        body: { grant_type: 'refresh_token', refresh_token: tokens.json.refresh_token, ...client },
      });
      expect(next.status).toBe(200);
      spent.push(tokens.json.refresh_token);
      tokens = next;
      await p.kill9();
      p = await start();
      const me = await call(peer(p), 'GET', '/api/v1/whoami', { token: tokens.json.access_token });
      expect(me.json.id).toBe(users[0]!.id);
    }
    // A rotated token replayed after the restarts: the whole grant ends, on disk too.
    const reuse = await call(peer(p), 'POST', '/api/oauth/token', {
      body: { grant_type: 'refresh_token', refresh_token: spent[0], ...client },
    });
    expect(reuse.json.error).toBe('invalid_grant');
    await p.kill9();
    p = await start();
    expect((await call(peer(p), 'GET', '/api/v1/whoami', { token: tokens.json.access_token })).status).toBe(
      401,
    );
    const latest = await call(peer(p), 'POST', '/api/oauth/token', {
      body: { grant_type: 'refresh_token', refresh_token: tokens.json.refresh_token, ...client },
    });
    expect(latest.json.error).toBe('invalid_grant');
  }, 120_000);

  it('deliveries keep their sequence numbers; none is reused after a crash', async () => {
    let p = await start();
    const acked: string[] = [];
    for (let i = 0; i < CRASHES; i++) {
      for (let j = 0; j < 10; j++) {
        const res = await call(peer(p), 'POST', '/api/v1/simulator/events', {
          key: p.seed.test_key,
          body: { app_id: p.seed.app.id, event: 'user.revoked' },
        });
        expect(res.status).toBe(201);
        acked.push(res.json.delivery_id);
      }
      await p.kill9();
      p = await start();
    }
    const events = await history(p, acked.length);
    expect(events.map((e) => e.data.delivery_id)).toEqual(acked);
    expect(events.map((e) => e.id)).toEqual(acked.map((_, i) => String(i + 1)));
  }, 120_000);

  it('pending webhook retries are resumed after a crash and all delivered', async () => {
    let up = false;
    const receiver = await startServer(answerWith(() => (up ? 200 : 503)));
    try {
      let p = await start();
      await call(peer(p), 'PATCH', `/api/v1/apps/${p.seed.app.id}`, {
        key: p.seed.test_key,
        body: { webhook_url: receiver.url },
      });
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) {
        const res = await call(peer(p), 'POST', '/api/v1/simulator/events', {
          key: p.seed.test_key,
          body: { app_id: p.seed.app.id, event: 'user.revoked' },
        });
        expect(res.json.webhook).toMatchObject({ status: 'failed', response_status: 503 });
        ids.push(res.json.delivery_id);
      }
      await p.kill9();
      up = true;
      const before = receiver.seen.length;
      p = await start();
      await expect
        .poll(() => new Set(receiver.seen.slice(before).map((r) => r.headers['x-marketplace-delivery'])), {
          timeout: 20_000,
        })
        .toEqual(new Set(ids));
    } finally {
      await receiver.close();
    }
  }, 60_000);

  it('imports an earlier log with a torn last record, leaving the torn record out', async () => {
    // A crash of the earlier version in the middle of an append left half a record behind.
    await cp(new URL('fixtures/log-folder', import.meta.url), dataDir, { recursive: true });
    await appendFile(join(dataDir, 'log-0.jsonl'), '{"op":"key","v":{"id":"key_torn","app_');
    let p = await start();
    const key = await call(peer(p), 'POST', `/api/v1/apps/${p.seed.app.id}/keys`, {
      key: p.seed.test_key,
      body: { mode: 'live' },
    });
    expect(key.status).toBe(201);
    await p.kill9();
    p = await start();
    expect((await call(peer(p), 'GET', '/api/v1/whoami', { key: key.json.key })).status).toBe(200);
  }, 60_000);
});

describe('files', () => {
  it('are 0700/0600 even under umask 000', async () => {
    const p = await start('000');
    await call(peer(p), 'POST', `/api/v1/apps/${p.seed.app.id}/keys`, {
      key: p.seed.test_key,
      body: { mode: 'test' },
    });
    await call(peer(p), 'POST', '/api/v1/simulator/events', {
      key: p.seed.test_key,
      body: { app_id: p.seed.app.id, event: 'user.revoked' },
    });
    expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
    const names = await readdir(dataDir, { recursive: true });
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      const s = await stat(join(dataDir, name));
      expect([name, s.mode & 0o777]).toEqual([name, s.isDirectory() ? 0o700 : 0o600]);
    }
    await p.kill9();
  }, 60_000);
});
