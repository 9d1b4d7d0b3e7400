import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsoleApp } from '../../src/sandbox/console/app.js';
import { ConsoleSessions } from '../../src/sandbox/console/sessions.js';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { developerToken, startTestSandbox } from '../support/sandbox.js';

// A console session has exactly the rights of the credential that began it (docs/DECISIONS.md, "What
// a console session may do"). The sandbox here holds a second developer, Mallory, with an app of her
// own (C), added to a v1 data folder that the sandbox imports; the seeded developer owns A and makes B.

const MALLORY = { id: 'usr_0a11ce0000000001', email: 'mallory@elsewhere.test', name: 'Mallory Other' };
const C = {
  id: 'app_0a11ce0000000001',
  client_id: 'cid_0a11ce00000000000000001',
  client_secret: 'cs_mallorysClientSecretNotYours0001',
  key: 'test_mallorysKeyNotYoursAtAll00000001',
  user: 'usr_0a11ce0000000002',
};

/** A v1 data folder (the fixture) with Mallory, her app C, its test key and one test user. */
async function dataDirWithMallory(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mkt-authority-'));
  await cp(new URL('../fixtures/sandbox-v1', import.meta.url), dir, { recursive: true });
  const file = join(dir, 'state.json');
  const state = JSON.parse(await readFile(file, 'utf8'));
  const at = '2026-11-22T06:00:18.119Z';
  state.users.push({ ...MALLORY, app_id: null, created_at: at });
  state.users.push({ id: C.user, email: 'u@c.test', name: 'C User', app_id: C.id, created_at: at });
  state.apps.push({
    id: C.id,
    owner_id: MALLORY.id,
    name: 'Mallory App',
    client_id: C.client_id,
    client_secret: C.client_secret,
    redirect_uris: ['http://127.0.0.1/callback'],
    webhook_url: null,
    embed_url: null,
    webhook_secret: 'whsec_mallorysWebhookSecret000000001',
    created_at: at,
  });
  state.keys.push({ id: 'key_0a11ce0000000001', app_id: C.id, mode: 'test', key: C.key, created_at: at });
  await writeFile(file, JSON.stringify(state));
  return dir;
}

let sandbox: Sandbox;
// A session begun with a key spends that key's per-minute limit (100 for a test key), as any use of the
// key does: each console request moves the rate-limit clock on 3 s, so a walk stays under it.
let offsetMs = 0;
let dataDir: string;
let devToken: string;
let appA: string;
let keyA: string;
let appB: { id: string; client: { id: string; secret: string }; key: string };
let origin: string;

/** The sandbox API with a credential. */
async function api(method: string, path: string, cred: Record<string, string>, body?: unknown) {
  const res = await fetch(`${sandbox.siteUrl}/api/v1${path}`, {
    method,
    headers: { ...cred, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, json: text ? JSON.parse(text) : undefined };
}
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const apiKey = (k: string) => ({ 'x-api-key': k });

/** Everything a console form could change about an app, read with its owner's credential. */
async function snapshot(
  app: string,
  cred: Record<string, string>,
  client: { id: string; secret: string },
): Promise<string> {
  const reads = [
    `/apps/${app}`,
    `/apps/${app}/keys?limit=100`,
    `/apps/${app}/plans?limit=100`,
    `/apps/${app}/webhook-secret`,
    `/apps/${app}/payouts`,
    `/apps/${app}/deliveries`,
    `/simulator/users?app_id=${app}`,
    '/simulator/clock',
  ];
  const seen = [];
  for (const path of reads) {
    const r = await api('GET', path, cred);
    seen.push(`${path} ${r.status} ${r.text}`.replace(/"now":"[^"]*"/, ''));
  }
  // The client secret still works (a rotation would refuse it as invalid_client).
  const token = await fetch(`${sandbox.siteUrl}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'refresh_token',
      refresh_token: 'rt_none',
      client_id: client.id,
      client_secret: client.secret,
    }),
  });
  seen.push(`client secret: ${token.status} ${((await token.json()) as { error: string }).error}`);
  return seen.join('\n');
}

/** Signs in through a one-time link; answers the session cookie. */
async function enter(url: string): Promise<string> {
  const res = await fetch(url, { redirect: 'manual' });
  await res.text();
  expect(res.status).toBe(303);
  return res.headers.get('set-cookie')!.split(';')[0]!;
}

/** A console request as the browser sends it: the session cookie, same origin, a fresh form token for a POST. */
async function consoleRequest(
  cookie: string,
  method: string,
  path: string,
  form: Record<string, string> = {},
) {
  offsetMs += 3_000;
  const body = new URLSearchParams(form);
  // GET, HEAD and DELETE take no body: one is refused (400) before routing (docs/PROTOCOL.md).
  const bodiless = method === 'GET' || method === 'HEAD' || method === 'DELETE';
  if (!bodiless) {
    const page = await fetch(`${origin}/console/apps/${appA}/keys`, { headers: { cookie } });
    body.set('csrf', /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!);
  }
  const res = await fetch(`${origin}${path}`, {
    method,
    redirect: 'manual',
    headers: { cookie, origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: bodiless ? undefined : body,
  });
  return { status: res.status, text: await res.text(), location: res.headers.get('location') };
}

beforeAll(async () => {
  dataDir = await dataDirWithMallory();
  sandbox = await startTestSandbox({ dataDir, now: () => Date.now() + offsetMs });
  origin = sandbox.siteUrl;
  appA = sandbox.seed.app.id;
  keyA = sandbox.seed.test_key;
  devToken = await developerToken(sandbox, ['apps:write']);
  const b = await api('POST', '/apps', bearer(devToken), {
    name: 'B',
    redirect_uris: ['http://127.0.0.1/cb'],
  });
  expect(b.status, b.text).toBe(201);
  const k = await api('POST', `/apps/${b.json.id}/keys`, bearer(devToken), { mode: 'test' });
  appB = { id: b.json.id, client: { id: b.json.client_id, secret: b.json.client_secret }, key: k.json.key };
});
afterAll(async () => {
  await sandbox?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** Every route of the console router with an `:app` in its path, from the router itself. */
function appRoutes(): Array<{ method: string; path: string }> {
  const router = createConsoleApp({
    sessions: new ConsoleSessions(Date.now),
    transport: fetch,
    siteUrl: () => origin,
    port: () => 0,
    previewLink: () => ({ url: origin }),
  });
  return router.routes.filter((r) => r.method !== 'ALL' && r.path.includes('/:app'));
}

/** A route's path with `:app` → `app` and every other parameter a real id of that app (or a plausible one). */
function fill(path: string, app: string, ids: { key: string; user: string }): string {
  return path
    .replace(':app', app)
    .replace(':key', ids.key)
    .replace(':user', ids.user)
    .replace(':plan', 'free')
    .replace(':dlv', 'dlv_00000000000000000000');
}

/** Every field any console form reads, with a harmful value. */
const HOSTILE_FORM = {
  mode: 'live',
  name: 'taken over',
  redirect_uris: 'http://127.0.0.1:1/evil',
  webhook_url: 'http://127.0.0.1:1/evil',
  embed_url: 'http://127.0.0.1:1/evil',
  plan: 'free',
  id: 'stolen',
  kind: 'free',
  status: 'active',
  event: 'subscription.created',
  data: '{}',
  feature: 'basic',
  advance_s: '86400',
  amount: '0',
  currency: 'USD',
};

describe('what a console session may do', () => {
  it('the router has app routes to walk (a new one is walked as soon as it exists)', () => {
    const routes = appRoutes();
    expect(routes.length).toBeGreaterThan(20);
    expect(routes.map((r) => `${r.method} ${r.path}`)).toContain('POST /console/apps/:app/keys');
  });

  it('begun with app A’s test key: POST /console/apps/<B>/keys mode=live is a 404 and B gets no key', async () => {
    const { url } = (await api('POST', '/console/sessions', apiKey(keyA))).json as { url: string };
    const cookie = await enter(url);
    const before = await api('GET', `/apps/${appB.id}/keys?limit=100`, bearer(devToken));
    const attack = await consoleRequest(cookie, 'POST', `/console/apps/${appB.id}/keys`, { mode: 'live' });
    expect(attack.status).toBe(404);
    expect(attack.text).not.toMatch(/live_[\w-]{32}/);
    const after = await api('GET', `/apps/${appB.id}/keys?limit=100`, bearer(devToken));
    expect(after.text).toBe(before.text);
    // The next page shows no key either (nothing was made, nothing is flashed).
    const next = await consoleRequest(cookie, 'GET', `/console/apps/${appA}/keys`);
    expect(next.text).not.toMatch(/live_[\w-]{32}/);
    // On its own app it does what the key may do through the API: a key may make a live key of its app.
    const own = await consoleRequest(cookie, 'POST', `/console/apps/${appA}/keys`, { mode: 'live' });
    expect(own).toMatchObject({ status: 303, location: `/console/apps/${appA}/keys` });
    const shown = await consoleRequest(cookie, 'GET', `/console/apps/${appA}/keys`);
    expect(shown.text).toMatch(/live_[\w-]{32}/);
    // And no more: a key cannot create apps through the API, so not through the console either.
    const apps = (await api('GET', '/apps?limit=100', bearer(devToken))).json.data.length;
    await consoleRequest(cookie, 'POST', '/console/apps', { name: 'by a key', redirect_uris: '' });
    expect((await api('GET', '/apps?limit=100', bearer(devToken))).json.data.length).toBe(apps);
  });

  it('begun with a key: the session ends when the key is deleted', async () => {
    const made = await api('POST', `/apps/${appA}/keys`, bearer(devToken), { mode: 'test' });
    const { url } = (await api('POST', '/console/sessions', apiKey(made.json.key))).json as { url: string };
    const cookie = await enter(url);
    expect((await consoleRequest(cookie, 'GET', `/console/apps/${appA}`)).status).toBe(200);
    expect((await api('DELETE', `/apps/${appA}/keys/${made.json.id}`, bearer(devToken))).status).toBe(204);
    const after = await consoleRequest(cookie, 'GET', `/console/apps/${appA}/keys`);
    expect(after.status).toBe(401);
    expect(after.text).not.toContain(made.json.id);
    expect((await consoleRequest(cookie, 'GET', '/console')).status).toBe(401);
  });

  const cases = [
    { session: 'app A’s test key', foreign: 'B (same developer)', target: () => appB.id },
    { session: 'app A’s test key', foreign: 'C (another developer)', target: () => C.id },
    { session: 'the developer', foreign: 'C (another developer)', target: () => C.id },
  ];
  for (const { session, foreign, target } of cases) {
    it(`begun with ${session}: every app route, every method, on ${foreign} is a 404 and changes nothing`, async () => {
      const url =
        session === 'the developer'
          ? (await sandbox.consoleLink()).url
          : ((await api('POST', '/console/sessions', apiKey(keyA))).json as { url: string }).url;
      const cookie = await enter(url);
      const app = target();
      const owner = app === C.id ? apiKey(C.key) : bearer(devToken);
      const client = app === C.id ? { id: C.client_id, secret: C.client_secret } : appB.client;
      const keys = (await api('GET', `/apps/${app}/keys`, owner)).json.data as Array<{ id: string }>;
      const ids = { key: keys[0]!.id, user: C.user };
      const before = await snapshot(app, owner, client);
      const refused: string[] = [];
      for (const route of appRoutes()) {
        for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
          const path = fill(route.path, app, ids);
          const r = await consoleRequest(cookie, method, path, HOSTILE_FORM);
          if (r.status !== 404) refused.push(`${method} ${path} → ${r.status}`);
          expect(r.text).not.toContain(MALLORY.email);
          expect(r.text).not.toContain(MALLORY.name);
        }
      }
      expect(refused).toEqual([]);
      expect(await snapshot(app, owner, client)).toBe(before);
    });
  }
});

describe('refusals never name another person', () => {
  it('another developer’s app is a 404 as if absent, with no name or e-mail, on the API and in the console', async () => {
    for (const path of [`/apps/${C.id}`, `/apps/${C.id}/keys`, `/apps/${C.id}/webhook-secret`]) {
      const r = await api('GET', path, bearer(devToken));
      expect(r.status, path).toBe(404);
      expect(r.json.error.code).toBe('not_found');
      expect(r.text).not.toContain(MALLORY.email);
      expect(r.text).not.toContain(MALLORY.name);
      expect(r.text).not.toContain(MALLORY.id);
      // Word for word what an app that does not exist gets.
      const absent = await api('GET', path.replace(C.id, 'app_0000000000000000'), bearer(devToken));
      expect(r.text.replace(C.id, 'X')).toBe(absent.text.replace('app_0000000000000000', 'X'));
    }
    const byKey = await api('GET', `/apps/${C.id}`, apiKey(keyA));
    expect(byKey.status).toBe(404);
    expect(byKey.text).not.toContain(MALLORY.name);
  });
});

describe('a session begun with a token', () => {
  // After every test that uses the developer's first token: this one moves the clock past a token's life.
  it('joins that token’s grant and ends no later than it', async () => {
    const token = await developerToken(sandbox, ['apps:write']);
    const issued = Date.now() + offsetMs;
    const { url } = (await api('POST', '/console/sessions', bearer(token))).json as { url: string };
    const cookie = await enter(url);
    expect((await consoleRequest(cookie, 'GET', '/console')).status).toBe(200);
    const log = await api('GET', `/apps/${appA}/logs?limit=5`, apiKey(keyA));
    const grantOf = (entries: Array<{ credential: { kind: string; id: string } }>) =>
      entries.find((e) => e.credential.kind === 'token')?.credential.id;
    // The console's calls count with the token's own grant (no grant of its own, no other rights).
    expect(grantOf(log.json.data)).toMatch(/^fam_/);
    // The token expires (an hour): the console session with it.
    offsetMs = issued - Date.now() + 3_600_000 + 1_000;
    expect((await api('GET', '/whoami', bearer(token))).status).toBe(401);
    const after = await consoleRequest(cookie, 'GET', `/console/apps/${appA}`);
    expect(after.status).toBe(401);
    expect(after.text).toContain('Sign in to the console');
  });
});

describe('signing out', () => {
  // Last in the file: it closes the sandbox to read its database (the sandbox holds it exclusively).
  it('revokes the console session’s own token at once', async () => {
    const grants = async () => {
      const log = await api('GET', `/apps/${appA}/logs?limit=100`, apiKey(keyA));
      const entries = log.json.data as Array<{ credential: { id: string } }>;
      return new Set(entries.map((e) => e.credential.id).filter((id) => id.startsWith('con_')));
    };
    const before = await grants();
    const cookie = await enter((await sandbox.consoleLink()).url);
    expect((await consoleRequest(cookie, 'GET', '/console')).status).toBe(200);
    // The console's own calls are in the request log under its grant (`con_…`), never its token.
    const mine = [...(await grants())].filter((g) => !before.has(g));
    expect(mine).toHaveLength(1);
    const out = await consoleRequest(cookie, 'POST', '/console/sign-out');
    expect(out.status).toBe(200);
    expect((await consoleRequest(cookie, 'GET', '/console')).status).toBe(401);
    await sandbox.close();
    const db = new DatabaseSync(join(dataDir, 'sandbox.sqlite'), { readOnly: true });
    try {
      const left = db.prepare("SELECT family FROM tokens WHERE family LIKE 'con_%'").all() as Array<{
        family: string;
      }>;
      expect(left.map((r) => r.family)).not.toContain(mine[0]);
    } finally {
      db.close();
    }
  });
});
