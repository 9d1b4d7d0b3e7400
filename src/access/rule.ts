/**
 * The one access rule as the CLI applies it (docs/DECISIONS.md §5), liberal toward a server that
 * words entitlements otherwise (§4): a missing `status` or `expires_at` is no obstacle, an unknown
 * status is (the CLI cannot tell what it grants).
 */

/** Statuses the CLI knows; all but `expired` allow access until `expires_at`. */
const KNOWN_STATUSES = new Set(['active', 'trialing', 'past_due', 'cancelled', 'expired']);

/** A limit at or above this reads as unlimited (the sandbox reports 2^53 - 1). */
const UNLIMITED_FROM = Number.MAX_SAFE_INTEGER;

/** The fields of an entitlement the rule reads; everything may be missing or mistyped on another server. */
export interface EntitlementLike {
  plan?: unknown;
  status?: unknown;
  features?: unknown;
  expires_at?: unknown;
  usage?: { api_calls?: unknown; limit?: unknown } | null;
}

export type AccessReason =
  | 'feature_in_plan'
  | 'feature_not_in_plan'
  | 'status_expired'
  | 'unknown_status'
  | 'access_ended'
  | 'no_entitlement';

export interface FeatureAccess {
  allowed: boolean;
  reason: AccessReason;
  /** One sentence saying why. */
  message: string;
  /** The user has made at least as many API calls as the plan's limit (reported, never a refusal). */
  over_limit: boolean;
}

/** The plan's API call limit, or null when it is unlimited or not given. */
export function callLimit(ent: EntitlementLike): number | null {
  const limit = ent.usage?.limit;
  return typeof limit === 'number' && Number.isFinite(limit) && limit < UNLIMITED_FROM ? limit : null;
}

/** "42 of 10000 API calls" or "42 API calls (unlimited)": an unlimited plan never reads as 0. */
export function usageText(ent: EntitlementLike): string | undefined {
  const usage = ent.usage;
  if (!usage || typeof usage !== 'object') return undefined;
  const calls = typeof usage.api_calls === 'number' ? String(usage.api_calls) : '?';
  const limit = callLimit(ent);
  return limit === null ? `${calls} API calls (unlimited)` : `${calls} of ${limit} API calls`;
}

/** May the entitlement's user use `feature` at `now` (ms), and why. */
export function featureAccess(ent: EntitlementLike, feature: string, now: number): FeatureAccess {
  const plan = typeof ent.plan === 'string' ? ent.plan : '?';
  const limit = callLimit(ent);
  const calls = ent.usage?.api_calls;
  const over_limit = limit !== null && typeof calls === 'number' && calls >= limit;
  const no = (reason: AccessReason, message: string): FeatureAccess => ({
    allowed: false,
    reason,
    message,
    over_limit,
  });
  const features = Array.isArray(ent.features) ? ent.features : [];
  if (!features.includes(feature)) {
    const list = features.length ? features.join(', ') : 'none';
    return no('feature_not_in_plan', `Plan "${plan}" does not include "${feature}" (features: ${list}).`);
  }
  const status = ent.status;
  if (status === 'expired') return no('status_expired', `The subscription to "${plan}" has expired.`);
  if (status !== undefined && status !== null && !KNOWN_STATUSES.has(String(status))) {
    return no(
      'unknown_status',
      `The subscription to "${plan}" is "${String(status)}", a status mkt does not know.`,
    );
  }
  if (typeof ent.expires_at === 'string') {
    const end = Date.parse(ent.expires_at);
    if (Number.isFinite(end) && end <= now) {
      return no('access_ended', `Access to "${plan}" ended at ${ent.expires_at}.`);
    }
  }
  const state =
    typeof status === 'string'
      ? ` (${status}` + (typeof ent.expires_at === 'string' ? ` until ${ent.expires_at})` : ')')
      : '';
  return {
    allowed: true,
    reason: 'feature_in_plan',
    message: `Plan "${plan}" includes "${feature}"${state}.`,
    over_limit,
  };
}
