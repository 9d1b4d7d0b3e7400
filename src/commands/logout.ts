import { Flags } from '@oclif/core';
import { BaseCommand } from '../base-command.js';
import { accountLabel } from '../auth/accounts.js';
import { logout } from '../auth/status.js';

export default class Logout extends BaseCommand<typeof Logout> {
  static summary =
    "Forget the profile's active sign-in (another account of the site takes its place), one account, or all of them (app secrets are kept).";
  static examples = [
    '<%= config.bin %> logout',
    '<%= config.bin %> logout --user ada@example.com',
    '<%= config.bin %> logout --all',
  ];
  static flags = {
    all: Flags.boolean({ description: 'forget every sign-in of every profile' }),
    user: Flags.string({
      description: 'forget this account of the profile (user id, e-mail or name; see `mkt auth list`)',
      exclusive: ['all'],
    }),
  };

  async run() {
    const deps = await this.deps();
    const done = await logout(deps, { all: this.flags.all, user: this.flags.user });
    if (done.length === 0) {
      deps.out.info(
        this.flags.all ? 'No profile was signed in.' : `Profile "${deps.profile}" was not signed in.`,
      );
    }
    for (const { forgotten: a, nowActive } of done) {
      deps.out.success(`Logged out of profile "${a.profile}": ${accountLabel(a)} on ${a.site_url}`);
      if (nowActive)
        deps.out.info(`Profile "${a.profile}" now uses ${accountLabel(nowActive)} on ${nowActive.site_url}.`);
    }
    for (const name of ['MKT_ACCESS_TOKEN', 'MKT_API_KEY'])
      if (deps.env[name]) deps.out.warn(`${name} is still set in your environment and will be used.`);
  }
}
