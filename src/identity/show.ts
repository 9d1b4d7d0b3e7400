import type { Deps } from '../deps.js';
import { ApiError, CheckFailedError } from '../errors.js';
import type { Profile } from '../auth/login.js';
import { checkFeature, entitlementFields, entitlements, whoami, type Entitlement } from './identity.js';

/** `mkt whoami`: fetches the profile and prints its summary (the command returns it: --json prints it). */
export async function showWhoami(deps: Deps): Promise<Profile> {
  const profile = await whoami(deps);
  if (!deps.json) {
    deps.out.fields([
      ['ID', profile.id],
      ['Name', profile.name],
      ['Email', profile.email],
      ['Avatar', profile.avatar_url],
    ]);
  }
  return profile;
}

/** `mkt entitlements`: prints the entitlement; with `feature`, a "no" is a CheckFailedError (exit 3) saying why. */
export async function showEntitlements(
  deps: Deps,
  input: { user?: string; feature?: string },
): Promise<Entitlement> {
  const ent = await entitlements(deps, { user: input.user }).catch((err: unknown) => {
    // No entitlement at all is a "no" to --feature, like a plan without the feature.
    if (input.feature && err instanceof ApiError && err.status === 404 && /entitle/i.test(err.message))
      throw new CheckFailedError('no_entitlement', `${err.message} So "${input.feature}" is not allowed.`);
    throw err;
  });
  const check = input.feature ? checkFeature(ent, input.feature, deps.clock.now()) : undefined;
  if (check && !check.allowed)
    throw new CheckFailedError('feature_not_allowed', check.reason, { document: ent });
  if (deps.json) return ent;
  if (!check) deps.out.fields(entitlementFields(ent));
  else deps.out.success(`"${input.feature}" is included in plan "${ent.plan}"`);
  return ent;
}
