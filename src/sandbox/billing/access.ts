import type { BillingPlan, SubStatus, Subscription } from './records.js';

/** The limit a plan without one reports, so that a naive `api_calls >= limit` reads as unlimited. */
export const UNLIMITED_CALLS = Number.MAX_SAFE_INTEGER;

/** The entitlement record of `GET /entitlements` (docs/DECISIONS.md §1, §5). */
export interface EntitlementView {
  user_id: string;
  app_id: string;
  plan: string;
  status: SubStatus;
  features: string[];
  usage: { api_calls: number; limit: number };
  expires_at?: string;
  cancelled_at?: string;
}

/**
 * The user's entitlement: their subscription, or the app's `free` plan when they have none (and the
 * app has one), else null.
 */
export function entitlementView(
  appId: string,
  userId: string,
  sub: Subscription | undefined,
  plan: (id: string) => BillingPlan | undefined,
): EntitlementView | null {
  if (sub === undefined) {
    const free = plan('free');
    if (!free || free.archived) return null;
    return {
      user_id: userId,
      app_id: appId,
      plan: free.id,
      status: 'active',
      features: free.features,
      usage: { api_calls: 0, limit: free.api_call_limit ?? UNLIMITED_CALLS },
    };
  }
  const p = plan(sub.plan);
  const view: EntitlementView = {
    user_id: userId,
    app_id: appId,
    plan: sub.plan,
    status: sub.status,
    features: p?.features ?? [],
    usage: { api_calls: sub.api_calls, limit: p?.api_call_limit ?? UNLIMITED_CALLS },
  };
  if (sub.expires_at !== null) view.expires_at = new Date(sub.expires_at).toISOString();
  if (sub.cancelled_at !== null) view.cancelled_at = new Date(sub.cancelled_at).toISOString();
  return view;
}

/** Why a feature is or is not usable; `over_limit` is reported beside, never a refusal (the app enforces). */
export interface AccessDecision {
  allowed: boolean;
  reason: 'feature_in_plan' | 'feature_not_in_plan' | 'status_expired' | 'access_ended' | 'no_entitlement';
  message: string;
  over_limit: boolean;
}

/**
 * The one access rule (docs/DECISIONS.md §5): the plan lists the feature, `status` is not `expired`,
 * and `expires_at` is absent or later than `now` (business time).
 */
export function accessDecision(ent: EntitlementView | null, feature: string, now: number): AccessDecision {
  if (ent === null) {
    return {
      allowed: false,
      reason: 'no_entitlement',
      message: 'The user has no plan on this app.',
      over_limit: false,
    };
  }
  const over_limit = ent.usage.api_calls >= ent.usage.limit;
  const deny = (reason: AccessDecision['reason'], message: string): AccessDecision => ({
    allowed: false,
    reason,
    message,
    over_limit,
  });
  if (!ent.features.includes(feature)) {
    return deny('feature_not_in_plan', `Plan "${ent.plan}" does not include "${feature}".`);
  }
  if (ent.status === 'expired')
    return deny('status_expired', `The subscription to "${ent.plan}" has expired.`);
  if (ent.expires_at !== undefined && Date.parse(ent.expires_at) <= now) {
    return deny('access_ended', `Access to "${ent.plan}" ended at ${ent.expires_at}.`);
  }
  const until = ent.expires_at === undefined ? '' : ` until ${ent.expires_at}`;
  return {
    allowed: true,
    reason: 'feature_in_plan',
    message: `Plan "${ent.plan}" includes "${feature}" (${ent.status}${until}).`,
    over_limit,
  };
}
