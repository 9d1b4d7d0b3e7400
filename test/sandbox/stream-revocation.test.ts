import { describe, expect, it } from 'vitest';
import { useSandbox } from '../support/sandbox.js';
import { call, openConsent, postConsent } from './helpers.js';

// Every stream — the relay and the request log — ends when the credential that opened it is gone:
// its key deleted (through the API, or revoked in the console), or its grant revoked (a replayed
// authorization code ends the grant, RFC 6749 §4.1.2). docs/PROTOCOL.md, streams.

const ctx = useSandbox();
const app = () => ctx.sandbox.seed.app.id;
const STREAMS = { relay: 'webhooks/stream', log: 'logs/stream' } as const;
type Kind = keyof typeof STREAMS;

/** Opens a stream with `auth` headers; `ended` resolves once the server has ended it. */
async function open(
  kind: Kind,
  auth: Record<string, string>,
): Promise<{ ended: Promise<void>; close(): void }> {
  const controller = new AbortController();
  const res = await fetch(`${ctx.sandbox.siteUrl}/api/v1/apps/${app()}/${STREAMS[kind]}`, {
    headers: { ...auth, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  // The first bytes (retry:, a position) say it is open.
  await reader.read();
  const ended = (async () => {
    for (;;) if ((await reader.read()).done) return;
  })();
  ended.catch(() => {}); // closed by the test itself
  return { ended, close: () => controller.abort() };
}

/** A new test key of the seeded app (made with the seeded one). */
async function newKey(): Promise<{ id: string; key: string }> {
  const res = await call(ctx.sandbox, 'POST', `/api/v1/apps/${app()}/keys`, {
    key: ctx.sandbox.seed.test_key,
    body: { mode: 'test' },
  });
  expect(res.status).toBe(201);
  return res.json;
}

/** The developer's grant as a person makes it: its access token, and a way to replay its code. */
async function developerGrant(): Promise<{ token: string; replay(): Promise<number> }> {
  const { app: seeded, developer } = ctx.sandbox.seed;
  const redirect_uri = 'http://127.0.0.1:9/callback';
  const page = await openConsent(ctx.sandbox, {
    client_id: seeded.client_id,
    redirect_uri,
    scope: 'apps:write',
  });
  const consent = await postConsent(ctx.sandbox, {
    ...page.fields,
    decision: 'approve',
    user_id: developer.id,
  });
  const code = consent.location!.searchParams.get('code')!;
  const exchange = () =>
    fetch(`${ctx.sandbox.siteUrl}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'authorization_code',
        code,
        redirect_uri,
        client_id: seeded.client_id,
        client_secret: seeded.client_secret,
      }),
    });
  const first = await exchange();
  expect(first.status).toBe(200);
  const { access_token } = (await first.json()) as { access_token: string };
  return { token: access_token, replay: async () => (await exchange()).status };
}

/** A console session of the seeded developer: its cookie and the anti-CSRF token of its forms. */
async function consoleSession(): Promise<{ cookie: string; csrf: string }> {
  const link = await ctx.sandbox.consoleLink();
  const entered = await fetch(link.url, { redirect: 'manual' });
  const cookie = entered.headers.get('set-cookie')!.split(';')[0]!;
  const page = await (
    await fetch(`${ctx.sandbox.siteUrl}/console/apps/${app()}/keys`, { headers: { cookie } })
  ).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
  return { cookie, csrf };
}

describe.each(['relay', 'log'] as const)('the %s stream', (kind) => {
  it('ends when the key that opened it is deleted', async () => {
    const key = await newKey();
    const other = await open(kind, { 'x-api-key': ctx.sandbox.seed.test_key });
    const stream = await open(kind, { 'x-api-key': key.key });
    const del = await call(ctx.sandbox, 'DELETE', `/api/v1/apps/${app()}/keys/${key.id}`, {
      key: ctx.sandbox.seed.test_key,
    });
    expect(del.status).toBe(204);
    await stream.ended;
    // A stream of another key goes on: it still gets what the app's requests add.
    let otherEnded = false;
    other.ended.then(
      () => (otherEnded = true),
      () => {},
    );
    await call(ctx.sandbox, 'GET', '/api/v1/whoami', { key: ctx.sandbox.seed.test_key });
    expect(otherEnded).toBe(false);
    other.close();
  });

  it('ends when the key that opened it is revoked in the console', async () => {
    const key = await newKey();
    const stream = await open(kind, { 'x-api-key': key.key });
    const session = await consoleSession();
    const revoked = await fetch(`${ctx.sandbox.siteUrl}/console/apps/${app()}/keys/${key.id}/revoke`, {
      method: 'POST',
      headers: {
        cookie: session.cookie,
        origin: ctx.sandbox.siteUrl,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ csrf: session.csrf }),
      redirect: 'manual',
    });
    expect(revoked.status).toBe(303);
    await stream.ended;
  });

  it('ends when the grant that opened it is revoked', async () => {
    const grant = await developerGrant();
    const stream = await open(kind, { authorization: `Bearer ${grant.token}` });
    // The code is replayed: the grant it made ends, and with it its tokens and streams.
    expect(await grant.replay()).toBe(400);
    await stream.ended;
    const after = await call(ctx.sandbox, 'GET', `/api/v1/apps/${app()}`, { token: grant.token });
    expect(after.status).toBe(401);
  });
});
