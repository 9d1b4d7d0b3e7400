import type { BusinessClock } from './clock.js';
import { DAY_MS, periodEnd } from './calendar.js';
import { charge } from './charges.js';
import { cancelled, GRACE_DAYS, RETRY_DAYS, transition } from './lifecycle.js';
import { BillingRefusal, type BillingStore, type Subscription, type Transition } from './records.js';

/** The period after the current one (a trial's first period starts at the trial's end). */
function nextPeriod(sub: Subscription, kind: 'monthly' | 'annual' | 'one_time' | 'free') {
  const anchor = sub.anchor_at ?? sub.period_end!;
  const periods = sub.anchor_at === null ? 1 : sub.periods + 1;
  return { anchor_at: anchor, periods, period_end: periodEnd(anchor, kind, periods) };
}

/** Runs the transition due for `sub` at its `next_at`: a renewal, a retry or an expiry. */
export function runDueTransition(store: BillingStore, sub: Subscription): Transition {
  const at = sub.next_at!;
  if (sub.next_kind === 'expire') {
    const next: Subscription = { ...sub, status: 'expired', next_kind: null, next_at: null };
    const events = sub.status === 'past_due' ? [cancelled(sub, at, 'payment_failed')] : [];
    if (sub.status === 'past_due') next.cancelled_at = at;
    store.putSubscription(next);
    return transition('expired', next, sub.status, at, events);
  }
  const plan = store.plan(sub.app_id, sub.plan);
  if (!plan || (plan.kind !== 'monthly' && plan.kind !== 'annual')) {
    // The plan went away or stopped renewing: access ends at the end of what was paid for.
    const next: Subscription = { ...sub, status: 'expired', next_kind: null, next_at: null };
    store.putSubscription(next);
    return transition('expired', next, sub.status, at);
  }
  const kind = sub.charges === 0 ? 'initial' : sub.next_kind === 'retry' ? 'retry' : 'renewal';
  const payment = charge(store, {
    app_id: sub.app_id,
    user_id: sub.user_id,
    plan,
    kind,
    prior: sub.charges,
    at,
  });
  const charges = sub.charges + 1;
  const periodEndAt = sub.period_end!;
  if (payment.outcome === 'succeeded') {
    const period = nextPeriod(sub, plan.kind);
    const next: Subscription = {
      ...sub,
      ...period,
      status: 'active',
      expires_at: period.period_end,
      failures: 0,
      charges,
      api_calls: 0,
      next_kind: 'renew',
      next_at: period.period_end,
    };
    store.putSubscription(next);
    return transition(sub.status === 'past_due' ? 'recovered' : 'renewed', next, sub.status, at, [], payment);
  }
  const failures = sub.failures + 1;
  const retryDay = RETRY_DAYS[failures - 1];
  const next: Subscription = {
    ...sub,
    status: 'past_due',
    expires_at: periodEndAt + GRACE_DAYS * DAY_MS,
    failures,
    charges,
    next_kind: retryDay === undefined ? 'expire' : 'retry',
    next_at: periodEndAt + (retryDay ?? GRACE_DAYS) * DAY_MS,
  };
  store.putSubscription(next);
  return transition(
    failures === 1 ? 'renewal_declined' : 'retry_declined',
    next,
    sub.status,
    at,
    [],
    payment,
  );
}

/** How many due subscriptions are read at once. */
const BATCH = 256;

/**
 * Runs every transition due up to `until` (business ms), in time order, calling `each` as each one
 * happens (so the caller sends its events in that order). Due subscriptions are read in batches; a
 * batch is followed in order only while no transition has made something due before the batch's
 * last entry (a retry a day later could come before another user's renewal), else it is read again.
 */
export function runDue(store: BillingStore, until: number, each: (t: Transition) => void): number {
  let count = 0;
  for (let batch = store.dueBatch(until, BATCH); batch.length > 0; batch = store.dueBatch(until, BATCH)) {
    const horizon = batch.at(-1)!.next_at!;
    for (const sub of batch) {
      const t = runDueTransition(store, sub);
      each(t);
      count += 1;
      const next = store.subscription(sub.app_id, sub.user_id)?.next_at;
      if (next !== null && next !== undefined && next <= horizon) break;
    }
  }
  return count;
}

/**
 * Moves business time forward by `advanceMs`, or to `to` (later than now), running every transition
 * inside the skipped interval as if the time had passed. Refuses to go back.
 */
export function advanceClock(
  store: BillingStore,
  clock: BusinessClock,
  input: { advance_ms?: number; to?: number },
  each: (t: Transition) => void,
): { from: number; to: number; transitions: number } {
  const from = clock.now();
  const target = input.to ?? from + (input.advance_ms ?? 0);
  if (target < from) {
    throw new BillingRefusal(
      409,
      'clock_backwards',
      `Business time only moves forward; ${new Date(target).toISOString()} is before now (${new Date(from).toISOString()}).`,
    );
  }
  const transitions = runDue(store, target, each);
  // "advance 2d" leaves business time 2 days ahead of real time, however long the run took.
  if (input.to === undefined) clock.advanceBy(target - from);
  else clock.moveTo(target);
  return { from, to: target, transitions };
}
