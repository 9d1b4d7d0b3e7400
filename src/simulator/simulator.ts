import type { Deps } from '../deps.js';
import { resolveAppId } from '../apps/resolve.js';
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

/** Creates a test user on a plan (a paid plan emits subscription.created). */
export async function createTestUser(
  deps: SimDeps,
  input: { app?: string; plan: string; status: string; email?: string; name?: string },
): Promise<TestUser> {
  const appId = await testApp(deps, input.app);
  const body = {
    app_id: appId,
    plan: input.plan,
    status: input.status,
    email: input.email,
    name: input.name,
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

/** Whether a test user may use a feature, and why. */
export async function checkEntitlement(
  deps: SimDeps,
  input: { app?: string; userId: string; feature: string },
): Promise<{ allowed: boolean; reason: string; entitlement: unknown }> {
  const appId = await testApp(deps, input.app);
  const body = { app_id: appId, user_id: input.userId, feature: input.feature };
  return (
    await deps.api.post<{ allowed: boolean; reason: string; entitlement: unknown }>(
      '/simulator/entitlement-checks',
      body,
    )
  ).data;
}
