import { Flags } from '@oclif/core';
import { BaseCommand } from '../base-command.js';
import { CheckFailedError } from '../errors.js';
import { checkFeature, entitlementFields, entitlements } from '../identity/identity.js';

export default class Entitlements extends BaseCommand<typeof Entitlements> {
  static summary = "Show a user's plan, status, features, usage and expiry for the app.";
  static description =
    'With a token from `mkt login` it shows your own entitlement; with an API key name the user with --user. --feature exits 0 when the user may use the feature and 3 when not, for shell conditions.';
  static examples = [
    '<%= config.bin %> entitlements',
    '<%= config.bin %> entitlements --user usr_123 --json',
    'if <%= config.bin %> entitlements --feature export; then echo allowed; fi',
  ];
  static enableJsonFlag = true;
  static flags = {
    user: Flags.string({ description: 'user id (usr_…); required with an API key' }),
    feature: Flags.string({ description: 'exit 0 when the user may use this feature, 3 when not' }),
  };

  async run() {
    const deps = await this.deps();
    const ent = await entitlements(deps, { user: this.flags.user });
    const check = this.flags.feature ? checkFeature(ent, this.flags.feature, deps.clock.now()) : undefined;
    if (deps.json) {
      if (check && !check.allowed) {
        deps.out.json(ent);
        deps.out.info(check.reason);
        return this.exit(3);
      }
      return ent;
    }
    if (!check) deps.out.fields(entitlementFields(ent));
    else if (check.allowed) deps.out.success(`"${this.flags.feature}" is included in plan "${ent.plan}"`);
    else throw new CheckFailedError('feature_not_allowed', check.reason);
    return ent;
  }
}
