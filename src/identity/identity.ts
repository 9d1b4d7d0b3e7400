import type { Profile } from '../auth/login.js';
import type { Deps } from '../deps.js';
import { MktError, UsageError } from '../errors.js';
import { featureAccess, usageText } from '../access/rule.js';

/** The entitlement document; `status` and `expires_at` are optional, unknown fields are kept. */
export interface Entitlement {
  user_id: string;
  app_id: string;
  plan: string;
  status?: string;
  features: string[];
  usage?: { api_calls?: number; limit?: number };
  expires_at?: string | null;
  [field: string]: unknown;
}

/** `GET /whoami`: the profile of whoever the credential belongs to. */
export async function whoami(deps: Deps): Promise<Profile> {
  // auth/status (and the sign-in code it imports: an HTTP server, PKCE, prompts) only when needed.
  if (!(await deps.session.credential())) throw await (await import('../auth/status.js')).notLoggedIn(deps);
  const res = await deps.api.get<Profile>('/whoami');
  if (!isObject(res.data)) throw new MktError('bad_response', 'GET /whoami did not answer a JSON object.');
  return res.data;
}

/** `GET /entitlements`, for the signed-in user or, with an API key, for `user` (`?user_id=`). */
export async function entitlements(deps: Deps, input: { user?: string }): Promise<Entitlement> {
  if (input.user !== undefined && !/^usr_[A-Za-z0-9_-]+$/.test(input.user)) {
    throw new UsageError(`"${input.user}" is not a user id (usr_…).`, { code: 'invalid_user_id' });
  }
  const credential = await deps.session.credential();
  if (!credential) throw await (await import('../auth/status.js')).notLoggedIn(deps);
  if (credential.kind !== 'token' && !input.user) {
    throw new UsageError('With an API key, name the user: --user usr_….', {
      code: 'user_required',
      hints: ['mkt entitlements --user usr_123', 'mkt login   (to read your own entitlement)'],
    });
  }
  const res = await deps.api.get<Entitlement>('/entitlements', { query: { user_id: input.user } });
  if (!isObject(res.data))
    throw new MktError('bad_response', 'GET /entitlements did not answer a JSON object.');
  return res.data;
}

/** Whether the entitlement lets the user use `feature` by the one access rule, and why not. */
export function checkFeature(
  ent: Entitlement,
  feature: string,
  now: number,
): { allowed: true; message: string } | { allowed: false; reason: string } {
  const access = featureAccess(ent, feature, now);
  return access.allowed
    ? { allowed: true, message: access.message }
    : { allowed: false, reason: access.message };
}

/** Label/value pairs of an entitlement for the readable summary. */
export function entitlementFields(ent: Entitlement): Array<[string, unknown]> {
  const calls = usageText(ent);
  return [
    ['User', ent.user_id],
    ['App', ent.app_id],
    ['Plan', ent.plan],
    ['Status', ent.status],
    ['Features', ent.features],
    ['Usage', calls],
    ['Expires', ent.expires_at],
  ];
}

function isObject(v: unknown): v is Record<string, unknown> & { id: string } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
