import { formatAmount } from '../../wire.js';
import { isoStamp } from '../kernel/ids.js';
import { DAY_MS, periodEnd } from './calendar.js';
import { charge, paymentSummary } from './charges.js';
import {
  BillingRefusal,
  type BillingPlan,
  type BillingStore,
  type LifeEvent,
  type SubStatus,
  type Subscription,
  type Transition,
  type TransitionName,
} from './records.js';

/** Retries of a failed renewal, in days after the period end; access ends at the grace end. */
export const RETRY_DAYS = [1, 3, 5] as const;
export const GRACE_DAYS = 7;

export const isPaid = (plan: BillingPlan): boolean => plan.kind !== 'free';

/** A transition record; `sub` is the subscription after it. */
export function transition(
  name: TransitionName,
  sub: Subscription,
  from: SubStatus | null,
  at: number,
  events: LifeEvent[] = [],
  payment?: Parameters<typeof paymentSummary>[0],
): Transition {
  const t: Transition = {
    at: isoStamp(at),
    app_id: sub.app_id,
    user_id: sub.user_id,
    plan: sub.plan,
    transition: name,
    from,
    to: sub.status,
    events,
  };
  if (payment) t.payment = paymentSummary(payment);
  return t;
}

export const created = (sub: Subscription): LifeEvent => ({
  event: 'subscription.created',
  data: { user_id: sub.user_id, plan: sub.plan },
});

export const cancelled = (
  sub: Subscription,
  at: number,
  reason: 'requested' | 'payment_failed' | 'plan_changed',
): LifeEvent => ({
  event: 'subscription.cancelled',
  data: { user_id: sub.user_id, plan: sub.plan, cancelled_at: isoStamp(at), reason },
});

function requireLinked(store: BillingStore, plan: BillingPlan): void {
  if (isPaid(plan) && store.payoutsAccount(plan.app_id) === null) {
    throw new BillingRefusal(
      409,
      'payouts_not_linked',
      `Plan "${plan.id}" is paid and app "${plan.app_id}" has no linked payment account to be paid into.`,
    );
  }
}

/** A subscription on `plan` starting at `at` as a paid period (no trial), before any charge. */
function fresh(plan: BillingPlan, userId: string, at: number, prior: Subscription | undefined): Subscription {
  const end = periodEnd(at, plan.kind, 1);
  return {
    user_id: userId,
    app_id: plan.app_id,
    plan: plan.id,
    status: 'active',
    anchor_at: isPaid(plan) ? at : null,
    periods: end === null ? 0 : 1,
    period_end: end,
    expires_at: end,
    cancelled_at: null,
    failures: 0,
    charges: prior?.charges ?? 0,
    api_calls: 0,
    next_kind: end === null ? null : 'renew',
    next_at: end,
    created_at: at,
  };
}

/**
 * Starts a paid (or free) period on `plan` now: a paid plan is charged first, and a declined charge
 * changes nothing but the payment record (`402 payment_declined`).
 */
function startPaid(store: BillingStore, plan: BillingPlan, userId: string, at: number, prior?: Subscription) {
  requireLinked(store, plan);
  const sub = fresh(plan, userId, at, prior);
  if (!isPaid(plan)) return { sub, payment: undefined };
  const payment = charge(store, {
    app_id: plan.app_id,
    user_id: userId,
    plan,
    kind: 'initial',
    prior: sub.charges,
    at,
  });
  sub.charges += 1;
  if (payment.outcome === 'declined') {
    // The charge count still moves (declines_renewals: only the first charge ever succeeds).
    if (prior) store.putSubscription({ ...prior, charges: sub.charges });
    throw new BillingRefusal(
      402,
      'payment_declined',
      `The charge of ${formatAmount(payment.amount, payment.currency)} for plan "${plan.id}" was declined (${payment.id}), as the test user's payment behaviour says.`,
    );
  }
  return { sub, payment };
}

/**
 * *subscribe*: a user without a live subscription takes `plan`: a trial when `trialDays` (else the
 * plan's `trial_days`) is above 0, else a charge now. Sends `subscription.created` for a paid plan.
 */
export function subscribe(
  store: BillingStore,
  input: { plan: BillingPlan; user_id: string; at: number; trial_days?: number; announce?: boolean },
): Transition {
  const { plan, at } = input;
  const prior = store.subscription(plan.app_id, input.user_id);
  if (prior && prior.status !== 'expired') {
    throw new BillingRefusal(
      409,
      'already_subscribed',
      `User "${input.user_id}" is already on plan "${prior.plan}" (${prior.status}).`,
    );
  }
  const trialDays = input.trial_days ?? plan.trial_days ?? 0;
  if (isPaid(plan) && trialDays > 0 && plan.kind !== 'one_time') {
    requireLinked(store, plan);
    const end = at + trialDays * DAY_MS;
    const sub: Subscription = {
      ...fresh(plan, input.user_id, at, prior),
      status: 'trialing',
      anchor_at: null,
      periods: 0,
      period_end: end,
      expires_at: end,
      next_kind: 'renew',
      next_at: end,
    };
    store.putSubscription(sub);
    return transition('trial_started', sub, prior?.status ?? null, at, [created(sub)]);
  }
  const { sub, payment } = startPaid(store, plan, input.user_id, at, prior);
  store.putSubscription(sub);
  return transition(
    'subscribed',
    sub,
    prior?.status ?? null,
    at,
    isPaid(plan) || input.announce ? [created(sub)] : [],
    payment,
  );
}

/** The user's subscription, or a 409 saying there is none to act on. */
export function liveSubscription(
  store: BillingStore,
  appId: string,
  userId: string,
  verb: string,
): Subscription {
  const sub = store.subscription(appId, userId);
  if (!sub || sub.status === 'expired') {
    throw new BillingRefusal(409, 'no_subscription', `User "${userId}" has no live subscription to ${verb}.`);
  }
  return sub;
}

/** *cancel*: → `cancelled`, access until `expires_at`, event `subscription.cancelled` (requested). */
export function cancel(store: BillingStore, appId: string, userId: string, at: number): Transition {
  const sub = liveSubscription(store, appId, userId, 'cancel');
  const plan = store.plan(appId, sub.plan);
  if (sub.status === 'cancelled') {
    throw new BillingRefusal(
      409,
      'already_cancelled',
      `The subscription of "${userId}" to "${sub.plan}" is already cancelled; it ends at ${sub.expires_at === null ? 'once' : isoStamp(sub.expires_at)}.`,
    );
  }
  if (plan?.kind === 'one_time' || plan?.kind === 'free' || sub.expires_at === null) {
    throw new BillingRefusal(
      409,
      'not_cancellable',
      `Plan "${sub.plan}" of user "${userId}" is ${plan?.kind === 'free' ? 'free' : 'a one-time purchase'} and cannot be cancelled, only changed.`,
    );
  }
  const next: Subscription = {
    ...sub,
    status: 'cancelled',
    cancelled_at: at,
    next_kind: 'expire',
    next_at: Math.max(sub.expires_at, at),
  };
  store.putSubscription(next);
  return transition('cancelled', next, sub.status, at, [cancelled(next, at, 'requested')]);
}

/**
 * *change plan*: immediate; the old paid plan's `subscription.cancelled` (plan_changed), then
 * `subscription.created` for the new one; a new period starts (no proration, no trial).
 */
export function changePlan(
  store: BillingStore,
  appId: string,
  userId: string,
  plan: BillingPlan,
  at: number,
  announce = false,
): Transition {
  const prior = store.subscription(appId, userId);
  if (!prior || prior.status === 'expired')
    return subscribe(store, { plan, user_id: userId, at, trial_days: 0, announce });
  if (prior.plan === plan.id) {
    throw new BillingRefusal(409, 'same_plan', `User "${userId}" is already on plan "${plan.id}".`);
  }
  const oldPlan = store.plan(appId, prior.plan);
  const { sub, payment } = startPaid(store, plan, userId, at, prior);
  store.putSubscription(sub);
  const events: LifeEvent[] = [];
  if (oldPlan === undefined || isPaid(oldPlan)) events.push(cancelled(prior, at, 'plan_changed'));
  events.push(created(sub));
  return transition('plan_changed', sub, prior.status, at, events, payment);
}
