import { DAY_MS, periodEnd } from './calendar.js';
import {
  cancel,
  cancelled,
  created,
  GRACE_DAYS,
  liveSubscription,
  RETRY_DAYS,
  transition,
} from './lifecycle.js';
import {
  BillingRefusal,
  type BillingStore,
  type SubStatus,
  type Subscription,
  type Transition,
} from './records.js';

/**
 * Forces a status for edge cases (`PATCH /simulator/users/{id} {status}`), with the events of the
 * transition it implies: `cancelled` is a cancel; `expired` ends access now (`subscription.cancelled`,
 * reason payment_failed, unless it was already cancelled); `past_due` is a renewal that failed now;
 * `active`/`trialing` start a period (or trial) now without a charge, `subscription.created` when the
 * subscription had expired. No charge is ever made by a forced status.
 */
export function forceStatus(
  store: BillingStore,
  input: { app_id: string; user_id: string; status: SubStatus; at: number },
): Transition {
  const { app_id, user_id, status, at } = input;
  if (status === 'cancelled') return cancel(store, app_id, user_id, at);
  const sub = store.subscription(app_id, user_id);
  if (!sub)
    throw new BillingRefusal(404, 'not_found', `User "${user_id}" has no subscription on app "${app_id}".`);
  if (sub.status === status) {
    throw new BillingRefusal(409, 'same_status', `The subscription of "${user_id}" is already ${status}.`);
  }
  const plan = store.plan(app_id, sub.plan);
  const recurring = plan?.kind === 'monthly' || plan?.kind === 'annual';
  let next: Subscription;
  let events: Transition['events'] = [];
  if (status === 'expired') {
    liveSubscription(store, app_id, user_id, 'expire');
    next = {
      ...sub,
      status,
      expires_at: at,
      cancelled_at: sub.cancelled_at ?? at,
      next_kind: null,
      next_at: null,
    };
    if (sub.status !== 'cancelled') events = [cancelled(sub, at, 'payment_failed')];
  } else if (status === 'past_due') {
    if (!recurring) {
      throw new BillingRefusal(
        409,
        'not_renewing',
        `Plan "${sub.plan}" does not renew, so it cannot be past due.`,
      );
    }
    liveSubscription(store, app_id, user_id, 'mark past due');
    next = {
      ...sub,
      status,
      period_end: at,
      expires_at: at + GRACE_DAYS * DAY_MS,
      cancelled_at: null,
      failures: 1,
      next_kind: 'retry',
      next_at: at + RETRY_DAYS[0] * DAY_MS,
    };
  } else {
    const trial = status === 'trialing';
    if (trial && !recurring) {
      throw new BillingRefusal(409, 'no_trial', `Plan "${sub.plan}" does not renew, so it has no trial.`);
    }
    const end = trial
      ? at + (plan?.trial_days || 14) * DAY_MS
      : recurring
        ? periodEnd(at, plan.kind, 1)
        : null;
    next = {
      ...sub,
      status,
      anchor_at: trial || !recurring ? null : at,
      periods: trial || !recurring ? 0 : 1,
      period_end: end,
      expires_at: end,
      cancelled_at: null,
      failures: 0,
      next_kind: end === null ? null : 'renew',
      next_at: end,
    };
    if (sub.status === 'expired') events = [created(next)];
  }
  store.putSubscription(next);
  return transition('status_forced', next, sub.status, at, events);
}
