import type { Deps } from '../deps.js';
import { ApiError, CheckFailedError, ExitCode } from '../errors.js';
import { checkFeature, entitlementFields, entitlements, whoami } from './identity.js';

/** `mkt whoami`: fetches and prints the profile (a summary, or JSON with --json). */
export async function showWhoami(deps: Deps): Promise<number> {
  const profile = await whoami(deps);
  if (deps.json) deps.out.json(profile);
  else {
    deps.out.fields([
      ['ID', profile.id],
      ['Name', profile.name],
      ['Email', profile.email],
      ['Avatar', profile.avatar_url],
    ]);
  }
  return ExitCode.ok;
}

/** `mkt entitlements`: prints the entitlement; with `feature`, answers 0 (allowed) or 3 (not) and says why. */
export async function showEntitlements(
  deps: Deps,
  input: { user?: string; feature?: string },
): Promise<number> {
  const ent = await entitlements(deps, { user: input.user }).catch((err: unknown) => {
    // No entitlement at all is a "no" to --feature, like a plan without the feature.
    if (input.feature && err instanceof ApiError && err.status === 404 && /entitle/i.test(err.message))
      throw new CheckFailedError('no_entitlement', `${err.message} So "${input.feature}" is not allowed.`);
    throw err;
  });
  const check = input.feature ? checkFeature(ent, input.feature, deps.clock.now()) : undefined;
  if (deps.json) {
    deps.out.json(ent);
    if (check && !check.allowed) {
      deps.out.info(check.reason);
      return ExitCode.checkFailed;
    }
    return ExitCode.ok;
  }
  if (!check) deps.out.fields(entitlementFields(ent));
  else if (check.allowed) deps.out.success(`"${input.feature}" is included in plan "${ent.plan}"`);
  else throw new CheckFailedError('feature_not_allowed', check.reason);
  return ExitCode.ok;
}
