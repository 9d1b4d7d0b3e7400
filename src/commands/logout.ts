import { Flags } from '@oclif/core';
import { BaseCommand } from '../base-command.js';
import { logout } from '../auth/status.js';

export default class Logout extends BaseCommand<typeof Logout> {
  static summary = "Forget the profile's stored sign-in: its OAuth token and API key (app secrets are kept).";
  static examples = ['<%= config.bin %> logout', '<%= config.bin %> logout --all'];
  static flags = { all: Flags.boolean({ description: 'forget the sign-in of every profile' }) };

  async run() {
    const deps = await this.deps();
    const forgotten = await logout(deps, { all: this.flags.all });
    if (forgotten.length === 0) {
      deps.out.info(
        this.flags.all ? 'No profile was signed in.' : `Profile "${deps.profile}" was not signed in.`,
      );
    }
    for (const profile of forgotten) deps.out.success(`Logged out of profile "${profile}"`);
    for (const name of ['MKT_ACCESS_TOKEN', 'MKT_API_KEY'])
      if (deps.env[name]) deps.out.warn(`${name} is still set in your environment and will be used.`);
  }
}
