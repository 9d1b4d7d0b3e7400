import { describe, expect, it } from 'vitest';
import { developerToken, useSandbox } from '../support/sandbox.js';
import { call, openStream } from './helpers.js';

// The business clock's inputs and its advance (docs/PROTOCOL.md, business clock): every input is
// checked against one bound before a transition is written, a date must be real, and while a long
// advance runs the sandbox still answers reads (from the state before it); writes wait for it.

const ctx = useSandbox({ sandboxPerTest: true });
const key = () => ({ key: ctx.sandbox.seed.test_key });
const clock = async () => (await call(ctx.sandbox, 'GET', '/api/v1/simulator/clock', key())).json;
const advance = (body: unknown) => call(ctx.sandbox, 'POST', '/api/v1/simulator/clock', { ...key(), body });
const payments = async () =>
  (await call(ctx.sandbox, 'GET', `/api/v1/apps/${ctx.sandbox.seed.app.id}/payments?limit=100`, key())).json
    .data as Array<{ user_id: string; kind: string }>;
const YEAR_S = 365 * 86_400;

describe('the clock refuses what it cannot do, before writing anything', () => {
  it('refuses dates that do not round-trip and anything past 100 years ahead, with clear messages', async () => {
    const before = await clock();
    const paid = (await payments()).length;
    for (const to of ['2026-02-30', '2026-13-01', '20260-01-01', '+275760-09-13T00:00:00.000Z', 'tomorrow']) {
      const res = await advance({ to });
      expect(res.status, to).toBe(400);
      expect(res.json.error.code).toBe('invalid_request');
      expect(res.json.error.message).toMatch(/real ISO 8601 date or time with a four-digit year/);
    }
    // One bound for both inputs: 100 years past real time.
    const far = new Date(Date.now() + 101 * 365 * 86_400_000).toISOString();
    const tooFar = await advance({ to: far });
    expect(tooFar.status).toBe(400);
    expect(tooFar.json.error.message).toMatch(/at most 100 years ahead of real time/);
    expect((await advance({ advance_s: 101 * YEAR_S })).status).toBe(400);
    expect(await clock()).toMatchObject({ offset_s: before.offset_s });
    expect(await payments()).toHaveLength(paid);
    // 60 years is fine; 50 more would be 110 past real time: refused by the same bound.
    expect((await advance({ advance_s: 60 * YEAR_S })).status).toBe(200);
    const at60 = await clock();
    const paidAt60 = (await payments()).length;
    const again = await advance({ advance_s: 50 * YEAR_S });
    expect(again.status).toBe(400);
    expect(again.json.error.message).toMatch(/at most 100 years ahead/);
    expect((await clock()).offset_s).toBe(at60.offset_s);
    expect(await payments()).toHaveLength(paidAt60);
    // A real date is taken as it is.
    const next = new Date(Date.parse(at60.now) + 40 * 86_400_000).toISOString().slice(0, 10);
    expect((await advance({ to: next })).status).toBe(200);
    expect((await clock()).now.slice(0, 10)).toBe(next);
  }, 60_000);

  it("labels a seeded subscriber's first charge a renewal (the subscription was paid before)", async () => {
    const ada = ctx.sandbox.seed.users.find((u) => u.status === 'active' && u.plan !== 'free')!;
    expect((await advance({ advance_s: 31 * 86_400 })).status).toBe(200);
    const hers = (await payments()).filter((p) => p.user_id === ada.id);
    expect(hers.map((p) => p.kind)).toEqual(['renewal']);
  });
});

describe('while the clock moves', () => {
  it('answers reads from the state before the advance, opens relay streams, and runs writes after it', async () => {
    const sb = ctx.sandbox;
    const token = await developerToken(sb, ['apps:write']);
    const app = sb.seed.app.id;
    // 300 subscribers: ten years are 36,000 renewals, long enough to ask many times meanwhile.
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < 300) {
          next++;
          const res = await call(sb, 'POST', '/api/v1/simulator/users', {
            token,
            body: { app_id: app, plan: 'pro-monthly' },
          });
          expect(res.status).toBe(201);
        }
      }),
    );
    // Reads with a live key (1,000 a minute), as an app's backend makes them.
    const live = (await call(sb, 'POST', `/api/v1/apps/${app}/keys`, { token, body: { mode: 'live' } })).json
      .key;
    const user = sb.seed.users.find((u) => u.status === 'active' && u.plan !== 'free')!.id;
    const entitlement = () => call(sb, 'GET', `/api/v1/entitlements?user_id=${user}`, { key: live });
    const before = (await entitlement()).json;
    const startOffset = (await clock()).offset_s;

    let advanced = false;
    const moving = call(sb, 'POST', '/api/v1/simulator/clock', {
      token,
      body: { advance_s: 10 * YEAR_S },
    }).then((res) => ((advanced = true), res));
    // Reads one after another until the advance answers: each is answered meanwhile.
    const during: Array<{ whoami: number; entitlement: unknown; offset: number }> = [];
    let write: Promise<{ status: number; json: { expires_at: string } }> | undefined;
    let stream: Promise<boolean> | undefined;
    while (!advanced) {
      const [whoami, ent, now] = await Promise.all([
        call(sb, 'GET', '/api/v1/whoami', { key: live }),
        entitlement(),
        call(sb, 'GET', '/api/v1/simulator/clock', { token }),
      ]);
      if (advanced) break;
      during.push({ whoami: whoami.status, entitlement: ent.json, offset: now.json.offset_s });
      if (during.length === 3) {
        // A write sent now waits for the advance; a relay stream opened now is served at once.
        write = call(sb, 'POST', '/api/v1/simulator/users', {
          token,
          body: { app_id: app, plan: 'pro-monthly' },
        });
        stream = openStream(sb, app, sb.seed.test_key).then(async (s) => {
          const first = await s.next();
          s.close();
          return first.event === 'position' && !advanced;
        });
      }
    }
    const moved = await moving;
    expect(moved.status).toBe(200);
    expect(moved.json.transitions.length).toBeGreaterThan(30_000);
    // Many reads were answered while the advance ran, from the state before it (those answered once it
    // committed, while its long answer was made, see the state after it: never anything between).
    const after = (await entitlement()).json;
    const endOffset = (await clock()).offset_s;
    const old = during.filter((d) => d.offset === startOffset);
    expect(old.length).toBeGreaterThanOrEqual(5);
    for (const d of during) {
      expect(d.whoami).toBe(200);
      expect(d.offset === startOffset ? before : after).toEqual(d.entitlement);
      expect([startOffset, endOffset]).toContain(d.offset);
    }
    expect(await stream).toBe(true);
    // The write ran once the advance had committed: its subscriber starts ten years on.
    const written = await write!;
    expect(written.status).toBe(201);
    expect(Date.parse(written.json.expires_at)).toBeGreaterThan(
      Date.parse(before.expires_at) + 9 * YEAR_S * 1000,
    );
    expect(after.expires_at > before.expires_at).toBe(true);
  }, 120_000);
});
