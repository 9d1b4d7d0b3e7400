import { execFileSync } from 'node:child_process';
import { chmod, cp, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { runMkt, tempDir } from '../support/cli.js';
import {
  developerToken,
  killAllSandboxProcesses,
  startSandboxProcess,
  startTestSandbox,
  type SandboxProcess,
} from '../support/sandbox.js';
import { call, fakeClock, openStream, submitConsent } from './helpers.js';

// Faults injected for real on the SQLite storage (docs/DECISIONS.md, durability): a second start on
// one folder, kill -9 in a burst of writes, a full tmpfs, a folder in the earlier log format.

let dir: { path: string; remove(): Promise<void> };
let dataDir: string;
let sb: Sandbox | undefined;
const mounts: string[] = [];
beforeEach(async () => {
  dir = await tempDir();
  dataDir = join(dir.path, 'sandbox');
});
afterEach(async () => {
  killAllSandboxProcesses();
  await sb?.close();
  sb = undefined;
  for (const m of mounts.splice(0)) execFileSync('umount', ['-l', m]);
  await dir.remove();
});

const peer = (p: SandboxProcess) => p as unknown as Sandbox;
const start = () => startSandboxProcess(dataDir, dir.path);

/** Creates plan `id` on the seeded app with a developer token; answers the status. */
async function createPlan(p: SandboxProcess, token: string, id: string, features: string[] = []) {
  const res = await call(peer(p), 'POST', `/api/v1/apps/${p.seed.app.id}/plans`, {
    token,
    body: { id, name: id, kind: 'monthly', price: { amount: 100, currency: 'USD' }, features },
  });
  return res;
}

describe('one sandbox per data folder', () => {
  it('refuses a second start naming the running one; a killed one never blocks the next', async () => {
    const first = await start();
    const second = await runMkt(['sandbox', 'start', '--port', '0', '--data-dir', dataDir], dir.path);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(first.siteUrl);
    expect(second.stderr).toContain(String(first.pid));
    // The first one is untouched.
    expect((await call(peer(first), 'GET', '/api/v1/whoami', { key: first.seed.test_key })).status).toBe(200);
    await first.kill9();
    const next = await start();
    expect([next.seed.app, next.seed.test_key]).toEqual([first.seed.app, first.seed.test_key]);
    // Node 22's ExperimentalWarning for node:sqlite never reaches the developer.
    expect(next.stderr()).not.toMatch(/ExperimentalWarning|experimental feature/i);
    await next.kill9();
  }, 60_000);
});

describe('kill -9 during a burst of writes', () => {
  it('keeps every acknowledged write', async () => {
    let p = await start();
    const token = await developerToken(p, ['apps:write']);
    const acknowledged: string[] = [];
    let sent = 0;
    const killAfter = 30 + Math.floor(Math.random() * 120);
    let killing: Promise<void> | undefined;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (killing === undefined) {
          const id = `burst-${sent++}`;
          try {
            const res = await createPlan(p, token, id);
            if (res.status === 201) acknowledged.push(id);
          } catch {
            // The connection died with the process: not acknowledged.
          }
          if (acknowledged.length >= killAfter) killing ??= p.kill9();
        }
      }),
    );
    await killing;
    p = await start();
    const ids = new Set<string>();
    let cursor: string | null = null;
    do {
      const query: string = cursor === null ? '?limit=100' : `?limit=100&cursor=${cursor}`;
      const page = await call(peer(p), 'GET', `/api/v1/apps/${p.seed.app.id}/plans${query}`, {
        key: p.seed.test_key,
      });
      for (const plan of page.json.data as Array<{ id: string }>) ids.add(plan.id);
      cursor = page.json.has_more ? page.json.next_cursor : null;
    } while (cursor !== null);
    expect(acknowledged.filter((id) => !ids.has(id))).toEqual([]);
    expect(acknowledged.length).toBeGreaterThanOrEqual(killAfter);
    await p.kill9();
  }, 90_000);
});

describe('a full disk', () => {
  it('answers writes 507 and reads 200, carries on when space returns, and loses nothing acknowledged', async () => {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0700', 'tmpfs', dataDir]);
    mounts.push(dataDir);
    let p = await start();
    const token = await developerToken(p, ['apps:write']);
    const features = Array.from({ length: 100 }, (_, i) => `feature-${i}-${'x'.repeat(48)}`);
    const acknowledged: string[] = [];
    let full: Awaited<ReturnType<typeof createPlan>> | undefined;
    for (let i = 0; i < 2000 && full === undefined; i++) {
      const res = await createPlan(p, token, `fill-${i}`, features);
      if (res.status === 201) acknowledged.push(`fill-${i}`);
      else full = res;
    }
    expect(full?.status).toBe(507);
    expect(full?.json.error.code).toBe('insufficient_storage');
    expect(full?.json.error.message).toMatch(/disk is full/);
    // Reads keep working, and a second write is refused the same way.
    const read = await call(peer(p), 'GET', `/api/v1/apps/${p.seed.app.id}/plans/${acknowledged.at(-1)}`, {
      key: p.seed.test_key,
    });
    expect(read.status).toBe(200);
    expect((await createPlan(p, token, 'while-full', features)).status).toBe(507);
    // Moving business time writes too (a month of transitions, the clock): refused, the clock unmoved.
    const clock = () => call(peer(p), 'GET', '/api/v1/simulator/clock', { key: p.seed.test_key });
    const before = (await clock()).json;
    const moved = await call(peer(p), 'POST', '/api/v1/simulator/clock', {
      key: p.seed.test_key,
      body: { advance_s: 40 * 86_400 },
    });
    expect(moved.status).toBe(507);
    expect((await clock()).json.offset_s).toBe(before.offset_s);

    execFileSync('mount', ['-o', 'remount,size=4m', dataDir]);
    for (const id of ['after-1', 'after-2']) {
      expect((await createPlan(p, token, id, features)).status).toBe(201);
      acknowledged.push(id);
    }
    await p.kill9();
    p = await start();
    for (const id of acknowledged) {
      const res = await call(peer(p), 'GET', `/api/v1/apps/${p.seed.app.id}/plans/${id}`, {
        key: p.seed.test_key,
      });
      expect([id, res.status]).toEqual([id, 200]);
    }
    expect(
      (
        await call(peer(p), 'GET', `/api/v1/apps/${p.seed.app.id}/plans/while-full`, {
          key: p.seed.test_key,
        })
      ).status,
    ).toBe(404);
    await p.kill9();
  }, 120_000);
});

describe('a data folder of the earlier log format', () => {
  it('is imported on first start in one transaction, with a line saying so, old files kept renamed', async () => {
    // Written by the sandbox of d8f60db (fixtures/make-log-folder.mjs): its seed, a plan, a trialing
    // user with tokens, and three events.
    await cp(new URL('fixtures/log-folder', import.meta.url), dataDir, { recursive: true });
    const expected = JSON.parse(
      await readFile(new URL('fixtures/log-folder.expected.json', import.meta.url), 'utf8'),
    );
    const lines: string[] = [];
    sb = await startTestSandbox({ dataDir, notice: (line) => lines.push(line) });
    expect(lines.filter((l) => l.startsWith('Imported'))).toHaveLength(1);
    expect(lines[0]).toContain('log-0.jsonl');
    // The seed as printed then, plus the plan made since.
    expect(sb.seed).toEqual({
      ...expected.seed,
      plans: [...expected.seed.plans, { id: 'team', name: 'Team', kind: 'annual' }],
    });
    const files = await readdir(dataDir);
    expect(files).toContain('log-0.jsonl.imported');
    expect(files).not.toContain('log-0.jsonl');
    // The imported refresh token still works (the access token has long expired).
    const { client_id, client_secret } = expected.seed.app;
    const renewed = await call(sb, 'POST', '/api/oauth/token', {
      body: {
        grant_type: 'refresh_token',
        refresh_token: expected.tokens.refresh_token,
        client_id,
        client_secret,
      },
    });
    const me = await call(sb, 'GET', '/api/v1/whoami', { token: renewed.json.access_token });
    expect(me.json.email).toBe('imported@sandbox.test');
    const ent = await call(sb, 'GET', `/api/v1/entitlements?user_id=${expected.user.id}`, {
      key: expected.seed.test_key,
    });
    expect([ent.json.plan, ent.json.status]).toEqual(['team', 'trialing']);
    const stream = await openStream(sb, sb.seed.app.id, sb.seed.test_key, '0');
    const seen = [];
    for (let i = 0; i < 5; i++) seen.push(JSON.parse((await stream.next()).data.body).event);
    stream.close();
    expect(seen).toEqual([
      'subscription.created',
      'user.authorized',
      'user.revoked',
      'user.revoked',
      'user.revoked',
    ]);
    await sb.close();

    // The next start has nothing more to import, and the next delivery number follows on.
    lines.length = 0;
    sb = await startTestSandbox({ dataDir, notice: (line) => lines.push(line) });
    expect(lines).toEqual([]);
    const next = await call(sb, 'POST', '/api/v1/simulator/events', {
      key: sb.seed.test_key,
      body: { app_id: sb.seed.app.id, event: 'user.revoked' },
    });
    expect(next.status).toBe(201);
    const tail = await openStream(sb, sb.seed.app.id, sb.seed.test_key, '5');
    expect((await tail.next()).data.delivery_id).toBe(next.json.delivery_id);
    tail.close();
  });
});

describe('the data folder', () => {
  it('is tightened to 0700 with a warning when others may write it', async () => {
    await mkdir(dataDir, { recursive: true });
    await chmod(dataDir, 0o777);
    const lines: string[] = [];
    sb = await startTestSandbox({ dataDir, notice: (line) => lines.push(line) });
    expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
    expect(lines.join('\n')).toMatch(/writable by others.*0700/);
  });
});

describe('the refresh reuse interval', () => {
  async function grant(sandbox: Sandbox) {
    const { app, users } = sandbox.seed;
    const redirect = 'http://127.0.0.1:9/callback';
    const consent = await submitConsent(sandbox, {
      client_id: app.client_id,
      redirect_uri: redirect,
      user_id: users[0]!.id,
    });
    const client = { client_id: app.client_id, client_secret: app.client_secret };
    const first = await call(sandbox, 'POST', '/api/oauth/token', {
      body: {
        grant_type: 'authorization_code',
        code: consent.location!.searchParams.get('code'),
        redirect_uri: redirect,
        ...client,
      },
    });
    // Asks whichever sandbox runs now (a test restarts it).
    const refresh = (token: string) =>
      call(sb!, 'POST', '/api/oauth/token', {
        body: { grant_type: 'refresh_token', refresh_token: token, ...client },
      });
    return { first, refresh };
  }

  it('answers the same new pair to a retry within 60 s, also after a restart', async () => {
    const clock = fakeClock();
    sb = await startTestSandbox({ dataDir, now: clock.now });
    const { first, refresh } = await grant(sb);
    const second = await refresh(first.json.refresh_token);
    expect(second.status).toBe(200);
    await sb.close();
    sb = await startTestSandbox({ dataDir, now: clock.now });
    clock.advance(59_000);
    const retry = await refresh(first.json.refresh_token);
    expect(retry.status).toBe(200);
    expect(retry.json).toEqual(second.json);
    expect((await call(sb, 'GET', '/api/v1/whoami', { token: second.json.access_token })).status).toBe(200);
  });

  it('ends the grant when a spent token comes back after 60 s', async () => {
    const clock = fakeClock();
    sb = await startTestSandbox({ dataDir, now: clock.now });
    const { first, refresh } = await grant(sb);
    const second = await refresh(first.json.refresh_token);
    clock.advance(61_000);
    const late = await refresh(first.json.refresh_token);
    expect(late.json.error).toBe('invalid_grant');
    expect((await call(sb, 'GET', '/api/v1/whoami', { token: second.json.access_token })).status).toBe(401);
    expect((await refresh(second.json.refresh_token)).json.error).toBe('invalid_grant');
  });
});

describe('the consent page', () => {
  it('never grants apps:write to a test user', async () => {
    sb = await startTestSandbox({ dataDir });
    const answer = await submitConsent(sb, {
      client_id: sb.seed.app.client_id,
      redirect_uri: 'http://127.0.0.1:9/callback',
      scope: 'apps:write',
      user_id: sb.seed.users[0]!.id,
    });
    expect(answer.status).toBe(403);
    expect(answer.location).toBeNull();
    expect(answer.text).toContain('cannot be granted');
  });
});
