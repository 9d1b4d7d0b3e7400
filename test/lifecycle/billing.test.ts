import { describe, expect, it } from 'vitest';
import { accessDecision, entitlementView, UNLIMITED_CALLS } from '../../src/sandbox/billing/access.js';
import { periodEnd } from '../../src/sandbox/billing/calendar.js';
import { BusinessClock } from '../../src/sandbox/billing/clock.js';
import { advanceClock } from '../../src/sandbox/billing/due.js';
import { forceStatus } from '../../src/sandbox/billing/force.js';
import { cancel, changePlan, subscribe } from '../../src/sandbox/billing/lifecycle.js';
import { BillingRefusal, type BillingPlan, type Transition } from '../../src/sandbox/billing/records.js';
import { MemoryBillingStore } from './memory-store.js';

const DAY = 86_400_000;
const T0 = Date.parse('2026-01-31T10:00:00.000Z');
const plan = (id: string, kind: BillingPlan['kind'], extra: Partial<BillingPlan> = {}): BillingPlan => ({
  id,
  app_id: 'app_1',
  kind,
  price: kind === 'free' ? null : { amount: 999, currency: 'USD' },
  features: kind === 'free' ? ['basic'] : ['basic', 'export'],
  api_call_limit: kind === 'free' ? 100 : null,
  archived: false,
  ...extra,
});

function world() {
  const store = new MemoryBillingStore();
  for (const p of [
    plan('free', 'free'),
    plan('pro-monthly', 'monthly'),
    plan('pro-annual', 'annual'),
    plan('lifetime', 'one_time'),
    plan('trial-monthly', 'monthly', { trial_days: 14 }),
  ])
    store.addPlan(p);
  store.accounts.set('app_1', 'acct_1');
  let real = T0;
  const clock = new BusinessClock(() => real, store);
  const log: Transition[] = [];
  const advance = (days: number) =>
    advanceClock(store, clock, { advance_ms: days * DAY }, (t) => log.push(t));
  const ent = (user: string) =>
    entitlementView('app_1', user, store.subscription('app_1', user), (id) => store.plan('app_1', id));
  return { store, clock, log, advance, ent, tick: (ms: number) => (real += ms) };
}

const summary = (log: Transition[]) => log.map((t) => `${t.at.slice(0, 10)} ${t.transition} ${t.to}`);
const events = (log: Transition[]) =>
  log.flatMap((t) => t.events.map((e) => `${e.event}:${(e.data as { reason?: string }).reason ?? ''}`));

describe('the subscription state machine over business time', () => {
  it('renews a monthly plan at each calendar month for a year, resetting usage, sending no invented event', () => {
    const w = world();
    const start = subscribe(w.store, {
      plan: w.store.plan('app_1', 'pro-monthly')!,
      user_id: 'usr_a',
      at: w.clock.now(),
    });
    expect(events([start])).toEqual(['subscription.created:']);
    w.store.putSubscription({ ...w.store.subscription('app_1', 'usr_a')!, api_calls: 42 });
    w.advance(365);
    expect(summary(w.log).slice(0, 3)).toEqual([
      '2026-02-28 renewed active',
      '2026-03-31 renewed active',
      '2026-04-30 renewed active',
    ]);
    expect(w.log).toHaveLength(12);
    expect(events(w.log)).toEqual([]);
    expect(w.ent('usr_a')).toMatchObject({
      status: 'active',
      usage: { api_calls: 0, limit: UNLIMITED_CALLS },
    });
    expect(w.store.payments.map((p) => `${p.kind}:${p.outcome}`)).toEqual([
      'initial:succeeded',
      ...Array(12).fill('renewal:succeeded'),
    ]);
    expect(w.clock.now()).toBe(T0 + 365 * DAY);
  });

  it('declines_renewals: past due, retries 1, 3 and 5 days after, expired at 7 with payment_failed', () => {
    const w = world();
    w.store.behaviours.set('app_1/usr_b', 'declines_renewals');
    subscribe(w.store, { plan: w.store.plan('app_1', 'pro-monthly')!, user_id: 'usr_b', at: w.clock.now() });
    w.advance(28);
    expect(w.ent('usr_b')).toMatchObject({ status: 'past_due', expires_at: '2026-03-07T10:00:00.000Z' });
    expect(accessDecision(w.ent('usr_b'), 'export', w.clock.now()).allowed).toBe(true);
    w.advance(30);
    expect(summary(w.log)).toEqual([
      '2026-02-28 renewal_declined past_due',
      '2026-03-01 retry_declined past_due',
      '2026-03-03 retry_declined past_due',
      '2026-03-05 retry_declined past_due',
      '2026-03-07 expired expired',
    ]);
    expect(events(w.log)).toEqual(['subscription.cancelled:payment_failed']);
    expect(w.store.payments.map((p) => `${p.kind}:${p.outcome}`)).toEqual([
      'initial:succeeded',
      'renewal:declined',
      'retry:declined',
      'retry:declined',
      'retry:declined',
    ]);
    expect(accessDecision(w.ent('usr_b'), 'export', w.clock.now())).toMatchObject({
      allowed: false,
      reason: 'status_expired',
    });
  });

  it('recovers on a retry that succeeds, keeping the period dates', () => {
    const w = world();
    w.store.behaviours.set('app_1/usr_c', 'declines_renewals');
    subscribe(w.store, { plan: w.store.plan('app_1', 'pro-monthly')!, user_id: 'usr_c', at: w.clock.now() });
    w.advance(29);
    w.store.behaviours.set('app_1/usr_c', 'succeeds');
    w.advance(3);
    expect(summary(w.log)).toEqual([
      '2026-02-28 renewal_declined past_due',
      '2026-03-01 retry_declined past_due',
      '2026-03-03 recovered active',
    ]);
    expect(w.ent('usr_c')?.expires_at).toBe('2026-03-31T10:00:00.000Z');
  });

  it('a declined first charge fails with 402 and leaves no subscription; an unlinked app refuses paid plans', () => {
    const w = world();
    w.store.behaviours.set('app_1/usr_d', 'declines');
    expect(() =>
      subscribe(w.store, { plan: w.store.plan('app_1', 'pro-monthly')!, user_id: 'usr_d', at: T0 }),
    ).toThrow(expect.objectContaining({ status: 402, code: 'payment_declined' }));
    expect(w.store.subscription('app_1', 'usr_d')).toBeUndefined();
    expect(w.store.payments.map((p) => p.outcome)).toEqual(['declined']);
    w.store.accounts.clear();
    const refusal = (() => {
      try {
        subscribe(w.store, { plan: w.store.plan('app_1', 'pro-annual')!, user_id: 'usr_e', at: T0 });
      } catch (e) {
        return e as BillingRefusal;
      }
    })();
    expect(refusal).toMatchObject({ status: 409, code: 'payouts_not_linked' });
    expect(refusal?.message).toContain('has no linked payment account');
  });

  it('a trial ends with the first charge; cancel keeps access to expires_at, then expires without an event', () => {
    const w = world();
    const t = subscribe(w.store, { plan: w.store.plan('app_1', 'trial-monthly')!, user_id: 'usr_f', at: T0 });
    expect(t).toMatchObject({ transition: 'trial_started', to: 'trialing' });
    w.advance(15);
    expect(w.store.payments.map((p) => `${p.kind}:${p.outcome}`)).toEqual(['initial:succeeded']);
    expect(w.ent('usr_f')).toMatchObject({ status: 'active', expires_at: '2026-03-14T10:00:00.000Z' });
    const c = cancel(w.store, 'app_1', 'usr_f', w.clock.now());
    expect(events([c])).toEqual(['subscription.cancelled:requested']);
    expect(() => cancel(w.store, 'app_1', 'usr_f', w.clock.now())).toThrow(BillingRefusal);
    w.advance(10);
    expect(accessDecision(w.ent('usr_f'), 'export', w.clock.now()).allowed).toBe(true);
    w.advance(20);
    expect(w.log.at(-1)).toMatchObject({
      at: '2026-03-14T10:00:00.000Z',
      transition: 'expired',
      to: 'expired',
      events: [],
    });
  });

  it('change plan sends cancelled(plan_changed) then created; one-time is lifetime and cannot be cancelled', () => {
    const w = world();
    subscribe(w.store, { plan: w.store.plan('app_1', 'pro-monthly')!, user_id: 'usr_g', at: T0 });
    const t = changePlan(w.store, 'app_1', 'usr_g', w.store.plan('app_1', 'lifetime')!, T0 + DAY);
    expect(events([t])).toEqual(['subscription.cancelled:plan_changed', 'subscription.created:']);
    expect(() => cancel(w.store, 'app_1', 'usr_g', T0 + DAY)).toThrow(
      expect.objectContaining({ code: 'not_cancellable' }),
    );
    w.advance(3650);
    expect(w.log).toEqual([]);
    expect(w.ent('usr_g')).toMatchObject({ plan: 'lifetime', status: 'active' });
    expect(w.ent('usr_g')?.expires_at).toBeUndefined();
  });

  it('forcing past_due schedules the retries; the clock never goes back', () => {
    const w = world();
    subscribe(w.store, { plan: w.store.plan('app_1', 'pro-annual')!, user_id: 'usr_h', at: T0 });
    forceStatus(w.store, { app_id: 'app_1', user_id: 'usr_h', status: 'past_due', at: T0 });
    w.advance(2);
    expect(summary(w.log)).toEqual(['2026-02-01 recovered active']);
    expect(() => advanceClock(w.store, w.clock, { to: T0 }, () => {})).toThrow(
      expect.objectContaining({ code: 'clock_backwards' }),
    );
  });

  it('runs the transitions of many users in time order, retries between renewals', () => {
    const w = world();
    const monthly = w.store.plan('app_1', 'pro-monthly')!;
    for (let i = 0; i < 600; i++) {
      const user = `usr_${String(i).padStart(4, '0')}`;
      if (i % 3 === 0) w.store.behaviours.set(`app_1/${user}`, 'declines_renewals');
      subscribe(w.store, { plan: monthly, user_id: user, at: T0 + i * 3_600_000 });
    }
    w.advance(400);
    const times = w.log.map((t) => Date.parse(t.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(w.log.filter((t) => t.transition === 'expired')).toHaveLength(200);
  });

  it('calendar periods do not drift', () => {
    expect(new Date(periodEnd(T0, 'monthly', 1)!).toISOString()).toBe('2026-02-28T10:00:00.000Z');
    expect(new Date(periodEnd(T0, 'monthly', 2)!).toISOString()).toBe('2026-03-31T10:00:00.000Z');
    expect(new Date(periodEnd(Date.parse('2028-02-29T00:00:00Z'), 'annual', 1)!).toISOString()).toBe(
      '2029-02-28T00:00:00.000Z',
    );
  });
});
