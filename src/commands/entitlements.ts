import { Flags } from '@oclif/core';
import { BaseCommand } from '../base-command.js';
import { showEntitlements } from '../identity/show.js';

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
    return showEntitlements(deps, { user: this.flags.user, feature: this.flags.feature });
  }
}
