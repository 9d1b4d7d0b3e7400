import { resolveAppId } from '../apps/resolve.js';
import type { Deps } from '../deps.js';
import { UsageError } from '../errors.js';
import { requireTestCredential } from './events.js';
import type { TestUser } from './simulator.js';

type UserDeps = Pick<Deps, 'api' | 'config' | 'profile' | 'session'>;

/** A test user's payment behaviour (docs/DECISIONS.md §5, Money). */
export const PAYMENT_OPTIONS = ['succeeds', 'declines', 'declines_renewals'] as const;

/** A test user with its subscription and billing, as `GET /simulator/users/{id}` answers it. */
export interface TestUserDetail extends TestUser {
  payment_behaviour?: string;
  cancelled_at?: string | null;
  usage?: { api_calls?: number; limit?: number };
  [field: string]: unknown;
}

async function target(deps: UserDeps, app: string | undefined): Promise<string> {
  const appId = await resolveAppId(deps, { app });
  await requireTestCredential(deps);
  return appId;
}

function userPath(user: string): string {
  if (!/^usr_[A-Za-z0-9_-]+$/.test(user)) {
    throw new UsageError(`"${user}" is not a user id (usr_…).`, {
      code: 'invalid_user_id',
      hints: ['mkt simulator users list'],
    });
  }
  return `/simulator/users/${encodeURIComponent(user)}`;
}

/** Every test user of the app. */
export async function listTestUsers(deps: UserDeps, input: { app?: string }): Promise<TestUserDetail[]> {
  const appId = await target(deps, input.app);
  return deps.api.list<TestUserDetail>('/simulator/users', { query: { app_id: appId } });
}

/** One test user. */
export async function getTestUser(
  deps: UserDeps,
  input: { app?: string; user: string },
): Promise<TestUserDetail> {
  const appId = await target(deps, input.app);
  return (await deps.api.get<TestUserDetail>(userPath(input.user), { query: { app_id: appId } })).data;
}

/** Changes a test user's plan (a plan change), payment behaviour, or forces a status. */
export async function updateTestUser(
  deps: UserDeps,
  input: { app?: string; user: string; plan?: string; payment?: string; status?: string },
): Promise<TestUserDetail> {
  const path = userPath(input.user);
  if (input.plan === undefined && input.payment === undefined && input.status === undefined) {
    throw new UsageError('Say what to change: --plan, --payment or --status.', {
      code: 'nothing_to_change',
      hints: [`mkt simulator users update ${input.user} --payment declines_renewals`],
    });
  }
  const appId = await target(deps, input.app);
  const body = { app_id: appId, plan: input.plan, payment_behaviour: input.payment, status: input.status };
  return (await deps.api.patch<TestUserDetail>(path, body)).data;
}

/** Cancels a test user's subscription (access stays until it expires; sends subscription.cancelled). */
export async function cancelTestUser(
  deps: UserDeps,
  input: { app?: string; user: string },
): Promise<TestUserDetail> {
  const path = `${userPath(input.user)}/cancel`;
  const appId = await target(deps, input.app);
  return (await deps.api.post<TestUserDetail>(path, { app_id: appId })).data;
}

/** The test user removes the app: every token dies, streams close, user.revoked is sent. */
export async function revokeTestUser(
  deps: UserDeps,
  input: { app?: string; user: string },
): Promise<{ user_id: string; app_id: string; tokens_revoked: number; [field: string]: unknown }> {
  const path = `${userPath(input.user)}/revoke`;
  const appId = await target(deps, input.app);
  return (
    await deps.api.post<{ user_id: string; app_id: string; tokens_revoked: number }>(path, { app_id: appId })
  ).data;
}

/** Label/value pairs of a test user for the readable summary. */
export function testUserFields(u: TestUserDetail): Array<[string, unknown]> {
  return [
    ['ID', u.id],
    ['Email', u.email],
    ['Plan', u.plan],
    ['Status', u.status],
    ['Expires', u.expires_at],
    ['Cancelled', u.cancelled_at],
    ['Payment', u.payment_behaviour],
  ];
}
