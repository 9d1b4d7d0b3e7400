import { BaseCommand } from '../../../base-command.js';
import { arg, flags } from '../../../flags.js';

export default class SimulatorUsersGet extends BaseCommand<typeof SimulatorUsersGet> {
  static summary = 'Show a test user: plan, status, expiry, payment behaviour.';
  static examples = [
    '<%= config.bin %> simulator users get usr_123',
    '<%= config.bin %> simulator users get usr_123 --json',
  ];
  static enableJsonFlag = true;
  static args = { user: arg({ description: 'test user id (usr_…)', required: true }) };
  static flags = { app: flags.app() };

  async run() {
    const deps = await this.deps();
    const { getTestUser, testUserFields } = await import('../../../simulator/users.js');
    const user = await getTestUser(deps, { app: this.flags.app, user: this.args.user });
    if (!deps.json) deps.out.fields(testUserFields(user));
    return user;
  }
}
