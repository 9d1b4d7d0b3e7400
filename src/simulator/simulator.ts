import type { Deps } from '../deps.js';
import { resolveAppId } from '../apps/resolve.js';
import { featureAccess, usageText, type EntitlementLike, type FeatureAccess } from '../access/rule.js';
import { requireTestCredential } from './events.js';

type SimDeps = Pick<Deps, 'api' | 'config' | 'profile' | 'session'>;

/** The app acted on (--app or the default), once the credential is known to be a test one. */
async function testApp(deps: SimDeps, app: string | undefined): Promise<string> {
  const appId = await resolveAppId(deps, { app });
  await requireTestCredential(deps);
  return appId;
}

/** A test user as the simulator answers it. */
export interface TestUser {
  id: string;
  email: string;
  name: string;
  app_id: string;
  plan: string;
  status: string;
  expires_at: string | null;
}

/** Creates a test user subscribed to a plan (charged or on trial; a paid plan sends subscription.created). */
export async function createTestUser(
  deps: SimDeps,
  input: {
    app?: string;
    plan: string;
    status?: string;
    email?: string;
    name?: string;
    trialDays?: number;
    payment?: string;
  },
): Promise<TestUser> {
  const appId = await testApp(deps, input.app);
  const body = {
    app_id: appId,
    plan: input.plan,
    status: input.status,
    email: input.email,
    name: input.name,
    trial_days: input.trialDays,
    payment_behaviour: input.payment,
  };
  return (await deps.api.post<TestUser>('/simulator/users', body)).data;
}

/** A token response for a test user, without a browser (emits user.authorized). */
export async function authorizeTestUser(
  deps: SimDeps,
  input: { app?: string; userId: string; scopes?: string[] },
): Promise<Record<string, unknown>> {
  const appId = await testApp(deps, input.app);
  const body = {
    app_id: appId,
    user_id: input.userId,
    ...(input.scopes?.length ? { scopes: input.scopes } : {}),
  };
  return (await deps.api.post<Record<string, unknown>>('/simulator/authorize', body)).data;
}

/** What `simulator check` answers: the one access rule applied to the user's entitlement at business time. */
export interface CheckResult extends FeatureAccess {
  feature: string;
  usage: string | undefined;
  entitlement: unknown;
  /** What the marketplace itself answered. */
  server: { allowed?: unknown; reason?: unknown };
}

/**
 * Whether a test user may use a feature, and why: the marketplace's check gives the entitlement and
 * its business time (`now`), and the CLI's copy of the one access rule decides (docs/DECISIONS.md §5).
 */
export async function checkEntitlement(
  deps: SimDeps & Pick<Deps, 'clock'>,
  input: { app?: string; userId: string; feature: string },
): Promise<CheckResult> {
  const appId = await testApp(deps, input.app);
  const body = { app_id: appId, user_id: input.userId, feature: input.feature };
  const res = await deps.api.post<{
    allowed?: unknown;
    reason?: unknown;
    now?: unknown;
    entitlement?: EntitlementLike | null;
  }>('/simulator/entitlement-checks', body);
  const { entitlement, now } = res.data;
  const server = { allowed: res.data.allowed, reason: res.data.reason };
  const at = typeof now === 'string' && Number.isFinite(Date.parse(now)) ? Date.parse(now) : deps.clock.now();
  if (!entitlement || typeof entitlement !== 'object') {
    const message = 'The user has no plan on this app.';
    return {
      allowed: false,
      reason: 'no_entitlement',
      message,
      over_limit: false,
      feature: input.feature,
      usage: undefined,
      entitlement: null,
      server,
    };
  }
  const access = featureAccess(entitlement, input.feature, at);
  return { ...access, feature: input.feature, usage: usageText(entitlement), entitlement, server };
}
