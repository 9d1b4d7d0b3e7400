import { describe, expect, it } from 'vitest';
import { startMkt, type RunningMkt } from '../support/cli.js';
import { developerToken, useSandbox } from '../support/sandbox.js';
import { startServer } from '../support/server.js';
import { api } from './helpers.js';

// A year (and the grace period after it) of subscriptions driven through the business clock, for
// each plan kind and payment behaviour, against a real `mkt webhooks listen` forwarding to a real
// receiver: every event the receiver gets is one the clock said it sent, and at every step the
// events and `GET /entitlements` tell the same story.

const ctx = useSandbox();
const app = () => ctx.sandbox.seed.app.id;
// A year of steps is more than a test key's 100 requests a minute: the commands run as the developer
// (a token is not key-limited) and the entitlements are read with a live key (1,000 a minute).
let developer: Record<string, string | undefined> = {};
let liveKey = '';
const mkt = (args: string[]) =>
  ctx.mkt(args[0] === 'simulator' && args[1] === 'clock' ? args : [...args, '--app', app()], developer);
const entitlement = async (user: string) => {
  const res = await fetch(`${ctx.sandbox.siteUrl}/api/v1/entitlements?user_id=${user}`, {
    headers: { 'x-api-key': liveKey },
  });
  return (await res.json()) as { status: string; expires_at?: string };
};

const call = (method: string, path: string, body?: unknown) => api(ctx, method, path, { body });

interface Scenario {
  name: string;
  plan: string;
  payment?: string;
  trial?: number;
  /** Day on which the user cancels. */
  cancelOn?: number;
  /** The events the user's life sends, in order (`event:reason`). */
  events: string[];
  /** Status at the end. */
  end: string;
  /** Charges, `kind:outcome`, in order. */
  charges: string[];
}

const MONTHLY_RENEWALS = 13; // 400 days hold 13 month ends
const SCENARIOS: Scenario[] = [
  {
    name: 'monthly, pays',
    plan: 'pro-monthly',
    events: ['subscription.created'],
    end: 'active',
    charges: ['initial:succeeded', ...Array(MONTHLY_RENEWALS).fill('renewal:succeeded')],
  },
  {
    name: 'monthly, declines renewals',
    plan: 'pro-monthly',
    payment: 'declines_renewals',
    events: ['subscription.created', 'subscription.cancelled:payment_failed'],
    end: 'expired',
    charges: ['initial:succeeded', 'renewal:declined', 'retry:declined', 'retry:declined', 'retry:declined'],
  },
  {
    name: 'annual, pays',
    plan: 'pro-annual',
    events: ['subscription.created'],
    end: 'active',
    charges: ['initial:succeeded', 'renewal:succeeded'],
  },
  {
    name: 'annual, declines renewals',
    plan: 'pro-annual',
    payment: 'declines_renewals',
    events: ['subscription.created', 'subscription.cancelled:payment_failed'],
    end: 'expired',
    charges: ['initial:succeeded', 'renewal:declined', 'retry:declined', 'retry:declined', 'retry:declined'],
  },
  {
    name: 'one-time, declines renewals (there are none)',
    plan: 'lifetime',
    payment: 'declines_renewals',
    events: ['subscription.created'],
    end: 'active',
    charges: ['initial:succeeded'],
  },
  {
    name: 'monthly with a trial, declines',
    plan: 'pro-monthly',
    trial: 14,
    payment: 'declines',
    events: ['subscription.created', 'subscription.cancelled:payment_failed'],
    end: 'expired',
    charges: ['initial:declined', 'retry:declined', 'retry:declined', 'retry:declined'],
  },
  {
    name: 'monthly with a trial, pays',
    plan: 'pro-monthly',
    trial: 14,
    events: ['subscription.created'],
    end: 'active',
    charges: ['initial:succeeded', ...Array(MONTHLY_RENEWALS - 1).fill('renewal:succeeded')],
  },
  {
    name: 'monthly, cancelled on day 50',
    plan: 'pro-monthly',
    cancelOn: 50,
    events: ['subscription.created', 'subscription.cancelled:requested'],
    end: 'expired',
    charges: ['initial:succeeded', 'renewal:succeeded'],
  },
  { name: 'free', plan: 'free', events: [], end: 'active', charges: [] },
];

const STEP_DAYS = 10;
const DAYS = 400;

/** What the last event says about access to `export`, checked against the entitlement at `now`. */
function agrees(
  last: string | undefined,
  ent: { status: string; expires_at?: string },
  now: number,
  plan: string,
): boolean {
  const open = ent.status !== 'expired' && (ent.expires_at === undefined || Date.parse(ent.expires_at) > now);
  if (last === undefined) return plan === 'free' && ent.status === 'active' && open;
  if (last === 'subscription.created') return open && ['active', 'trialing', 'past_due'].includes(ent.status);
  if (last === 'subscription.cancelled:payment_failed') return ent.status === 'expired' && !open;
  // Cancelled on request: access until expires_at, then expired.
  return open ? ent.status === 'cancelled' : ent.status === 'expired';
}

describe('a year of subscriptions through the business clock', () => {
  it('sends exactly the events of each life, received by mkt webhooks listen, always agreeing with GET /entitlements', async () => {
    const started = Date.now();
    developer = {
      MKT_API_KEY: undefined,
      MKT_ACCESS_TOKEN: await developerToken(ctx.sandbox, ['apps:write']),
    };
    liveKey = (await call('POST', `/apps/${app()}/keys`, { mode: 'live' })).json.key;
    for (const plan of [
      { id: 'pro-annual', name: 'Pro (annual)', kind: 'annual', price: { amount: 9900, currency: 'USD' } },
      { id: 'lifetime', name: 'Lifetime', kind: 'one_time', price: { amount: 19900, currency: 'USD' } },
    ]) {
      const res = await call('POST', `/apps/${app()}/plans`, { ...plan, features: ['basic', 'export'] });
      expect(res.status).toBe(201);
    }
    const receiver = await startServer((_req, res) => res.writeHead(200).end());
    const listen: RunningMkt = startMkt(
      [
        'webhooks',
        'listen',
        '--json',
        '--app',
        app(),
        '--forward-to',
        receiver.url,
        '--forward-backoff',
        '50',
      ],
      ctx.dir,
      { env: ctx.env },
    );
    try {
      await listen.waitFor((lines) => lines.some((l) => l.type === 'ready'));
      const users = new Map<string, Scenario>();
      for (const s of SCENARIOS) {
        const args = ['simulator', 'users', 'create', '--plan', s.plan, '--json'];
        if (s.payment) args.push('--payment', s.payment);
        if (s.trial) args.push('--trial-days', String(s.trial));
        const r = await mkt(args);
        expect(r.code, r.stderr).toBe(0);
        users.set(JSON.parse(r.stdout).id, s);
      }
      // A first charge that is declined creates nobody and says so.
      const declined = await mkt([
        'simulator',
        'users',
        'create',
        '--plan',
        'pro-monthly',
        '--payment',
        'declines',
      ]);
      expect(declined.code).toBe(1);
      expect(declined.stderr).toContain('declined');

      const received = () =>
        receiver.seen.map((r) => JSON.parse(r.body) as { event: string; timestamp: string; data: any }); // eslint-disable-line @typescript-eslint/no-explicit-any
      const label = (e: { event: string; data: { reason?: string } }) =>
        e.data.reason ? `${e.event}:${e.data.reason}` : e.event;
      let expected = users.size - [...users.values()].filter((s) => s.plan === 'free').length;
      const clockEvents: string[] = [];
      for (let day = STEP_DAYS; day <= DAYS; day += STEP_DAYS) {
        const step = await mkt(['simulator', 'clock', 'advance', `${STEP_DAYS}d`, '--json']);
        expect(step.code, step.stderr).toBe(0);
        const moved = JSON.parse(step.stdout);
        for (const t of moved.transitions) {
          // The seeded users live too (Pat, past due, expires): their events count, their checks are elsewhere.
          expected += t.events.length;
          if (users.has(t.user_id)) for (const e of t.events) clockEvents.push(`${t.user_id} ${label(e)}`);
        }
        for (const [id, s] of users) {
          if (s.cancelOn !== undefined && day === s.cancelOn) {
            const c = await mkt(['simulator', 'users', 'cancel', id, '--json']);
            expect(c.code, c.stderr).toBe(0);
            expected += 1;
          }
        }
        await receiver.waitFor(expected, 15_000);
        const now = Date.parse(moved.now);
        const events = received();
        for (const [id, s] of users) {
          const ent = await entitlement(id);
          const mine = events.filter((e) => e.data.user_id === id);
          const last = mine.length ? label(mine.at(-1)!) : undefined;
          expect(
            agrees(last, ent, now, s.plan),
            `${s.name} on day ${day}: ${last} vs ${JSON.stringify(ent)}`,
          ).toBe(true);
        }
      }
      const events = received();
      // Nothing but what the lives sent: every delivery is one the clock or a command made.
      expect(events).toHaveLength(expected);
      for (const e of events) {
        // Transport time is real: the envelope's timestamp is now, though business time is a year on.
        expect(Date.parse(e.timestamp)).toBeGreaterThanOrEqual(started - 1000);
        expect(Date.parse(e.timestamp)).toBeLessThanOrEqual(Date.now() + 1000);
      }
      for (const [id, s] of users) {
        expect(events.filter((e) => e.data.user_id === id).map(label), s.name).toEqual(s.events);
        const ent = await entitlement(id);
        expect(ent.status, s.name).toBe(s.end);
        const pays = await mkt(['apps', 'payments', 'list', '--user', id, '--json']);
        expect(
          JSON.parse(pays.stdout).map((p: { kind: string; outcome: string }) => `${p.kind}:${p.outcome}`),
          s.name,
        ).toEqual(s.charges);
      }
      for (const line of clockEvents) {
        const [id, what] = line.split(' ');
        expect(users.get(id!)!.events).toContain(what);
      }
      expect(listen.lines.filter((l) => l.type === 'forwarded').every((l) => l.signature === 'valid')).toBe(
        true,
      );
    } finally {
      listen.child.kill('SIGINT');
      await listen.exit();
      await receiver.close();
    }
  }, 480_000);
});
