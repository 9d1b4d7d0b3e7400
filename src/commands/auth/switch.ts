import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';

export default class AuthSwitch extends BaseCommand<typeof AuthSwitch> {
  static summary = "Change the profile's active account on its site (the one every command uses).";
  static description =
    'With two accounts, switches to the other one; with more, asks on a terminal, or takes --user (a user id, e-mail or name). Sign in to another account with `mkt login`; the one before is kept.';
  static examples = [
    '<%= config.bin %> auth switch',
    '<%= config.bin %> auth switch --user ada@example.com',
    '<%= config.bin %> --profile work auth switch --user usr_123',
  ];
  static enableJsonFlag = true;
  static flags = {
    user: Flags.string({ description: 'the account to use: user id, e-mail or name (see `mkt auth list`)' }),
  };

  async run() {
    const deps = await this.deps();
    const { chooseAccount } = await import('../../auth/switch.js');
    const { accountLabel, switchTo } = await import('../../auth/accounts.js');
    const target = await chooseAccount(deps, this.flags.user);
    const now = target.active ? target : await switchTo(deps, target);
    if (!deps.json) {
      if (target.active)
        deps.out.info(`Profile "${deps.profile}" already uses ${accountLabel(now)} on ${now.site_url}.`);
      else deps.out.success(`Profile "${deps.profile}" now uses ${accountLabel(now)} on ${now.site_url}`);
    }
    const { profile, active, id, kind, user, client_id, site_url } = now;
    return { site_url, profile, active, id, kind, user, client_id };
  }
}
