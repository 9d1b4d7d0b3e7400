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

/**
 * Runs the transition due for `sub` at its `next_at`: a renewal, a retry or an expiry. Answers it
 * and the subscription as it now is (as written).
 */
export function runDueTransition(
  store: BillingStore,
  sub: Subscription,
): { transition: Transition; next: Subscription } {
  const at = sub.next_at!;
  if (sub.next_kind === 'expire') {
    const next: Subscription = { ...sub, status: 'expired', next_kind: null, next_at: null };
    const events = sub.status === 'past_due' ? [cancelled(sub, at, 'payment_failed')] : [];
    if (sub.status === 'past_due') next.cancelled_at = at;
    store.putSubscription(next);
    return { transition: transition('expired', next, sub.status, at, events), next };
  }
  const plan = store.plan(sub.app_id, sub.plan);
  if (!plan || (plan.kind !== 'monthly' && plan.kind !== 'annual')) {
    // The plan went away or stopped renewing: access ends at the end of what was paid for.
    const next: Subscription = { ...sub, status: 'expired', next_kind: null, next_at: null };
    store.putSubscription(next);
    return { transition: transition('expired', next, sub.status, at), next };
  }
  // Only the end of a trial is a first charge: a subscriber who never paid here (a seeded one, one
  // forced active) renews.
  const kind =
    sub.next_kind === 'retry'
      ? 'retry'
      : sub.status === 'trialing' && sub.charges === 0
        ? 'initial'
        : 'renewal';
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
    return {
      transition: transition(
        sub.status === 'past_due' ? 'recovered' : 'renewed',
        next,
        sub.status,
        at,
        [],
        payment,
      ),
      next,
    };
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
  return {
    transition: transition(
      failures === 1 ? 'renewal_declined' : 'retry_declined',
      next,
      sub.status,
      at,
      [],
      payment,
    ),
    next,
  };
}

/** How many due subscriptions are read at once. */
const BATCH = 256;

/** Whether `a` is due before `b` (ties in creation order); undefined when a tie's order is unknown. */
function dueBefore(a: Subscription, b: Subscription): boolean | undefined {
  if (a.next_at! !== b.next_at!) return a.next_at! < b.next_at!;
  return a.order === undefined || b.order === undefined ? undefined : a.order < b.order;
}

/**
 * Runs the transitions of the first batch of those due up to `until` (business ms), in time order,
 * calling `each` as each one happens (so the caller sends its events in that order); answers how many
 * ran (0: nothing is due). Due subscriptions are read in batches (everything not in a batch is due
 * after its last entry). A transition that makes its subscription due again within the batch (a retry
 * a day later can come before another user's renewal) puts it back at its place; when its place is
 * unknown (a tie whose creation order the store did not say) the batch ends there and is read again.
 */
export function runDueBatch(store: BillingStore, until: number, each: (t: Transition) => void): number {
  const batch = store.dueBatch(until, BATCH);
  if (batch.length === 0) return 0;
  const last = batch.at(-1)!;
  let count = 0;
  for (let i = 0; i < batch.length; i++) {
    const sub = batch[i]!;
    const { transition, next: again } = runDueTransition(store, sub);
    each(transition);
    count += 1;
    if (again.next_at === null) continue;
    const inBatch = dueBefore(again, last);
    if (inBatch === false) continue;
    let place = i + 1;
    let earlier = inBatch && dueBefore(batch[place]!, again);
    while (earlier === true) earlier = dueBefore(batch[++place]!, again);
    if (earlier === undefined) break;
    batch.splice(place, 0, again);
  }
  return count;
}

/** Runs every transition due up to `until`, batch after batch (see {@link runDueBatch}). */
export function runDue(store: BillingStore, until: number, each: (t: Transition) => void): number {
  let count = 0;
  for (let n = runDueBatch(store, until, each); n > 0; n = runDueBatch(store, until, each)) count += n;
  return count;
}

/** What an advance asks for, checked before anything is written: where business time goes. */
export interface AdvanceInput {
  advance_ms?: number;
  to?: number;
}

/**
 * Where `input` takes business time from now: refused (nothing written) when it goes back, or past
 * the one bound, 100 years ahead of real time ({@link BusinessClock.latest}).
 */
export function advanceTarget(clock: BusinessClock, input: AdvanceInput): { from: number; target: number } {
  const from = clock.now();
  const target = input.to ?? from + (input.advance_ms ?? 0);
  if (target < from) {
    throw new BillingRefusal(
      409,
      'clock_backwards',
      `Business time only moves forward; ${new Date(target).toISOString()} is before now (${new Date(from).toISOString()}).`,
    );
  }
  const latest = clock.latest();
  if (!(target <= latest)) {
    throw new BillingRefusal(
      400,
      'invalid_request',
      `Business time goes at most 100 years ahead of real time (to ${new Date(latest).toISOString()}); this advance would take it past that.`,
    );
  }
  return { from, target };
}

/** Sets the clock at the end of an advance. */
function settle(clock: BusinessClock, input: AdvanceInput, from: number, target: number): void {
  // "advance 2d" leaves business time 2 days ahead of real time, however long the run took.
  if (input.to === undefined) clock.advanceBy(target - from);
  else clock.moveTo(target);
}

/**
 * Moves business time forward by `advance_ms`, or to `to` (later than now), running every transition
 * inside the skipped interval as if the time had passed. Refuses to go back or past the bound.
 */
export function advanceClock(
  store: BillingStore,
  clock: BusinessClock,
  input: AdvanceInput,
  each: (t: Transition) => void,
): { from: number; to: number; transitions: number } {
  const { from, target } = advanceTarget(clock, input);
  const transitions = runDue(store, target, each);
  settle(clock, input, from, target);
  return { from, to: target, transitions };
}

/**
 * {@link advanceClock} in steps: `step(fn)` runs `fn` (a check, a batch of transitions, the clock's
 * new offset) and lets the event loop turn before the next (GroupCommit.long, which makes the whole
 * one transaction).
 */
export async function advanceClockInSteps(
  store: BillingStore,
  clock: BusinessClock,
  input: AdvanceInput,
  each: (t: Transition) => void,
  step: <R>(fn: () => R) => Promise<R>,
): Promise<{ from: number; to: number; transitions: number }> {
  const { from, target } = await step(() => advanceTarget(clock, input));
  let transitions = 0;
  for (let n = -1; n !== 0; transitions += n) n = await step(() => runDueBatch(store, target, each));
  await step(() => settle(clock, input, from, target));
  return { from, to: target, transitions };
}
