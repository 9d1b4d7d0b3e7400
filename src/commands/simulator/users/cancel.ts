import { BaseCommand } from '../../../base-command.js';
import { arg, flags } from '../../../flags.js';

export default class SimulatorUsersCancel extends BaseCommand<typeof SimulatorUsersCancel> {
  static summary =
    "Cancel a test user's subscription: access stays until it expires; sends subscription.cancelled.";
  static examples = [
    '<%= config.bin %> simulator users cancel usr_123',
    '<%= config.bin %> simulator users cancel usr_123 --json',
  ];
  static enableJsonFlag = true;
  static args = { user: arg({ description: 'test user id (usr_…)', required: true }) };
  static flags = { app: flags.app() };

  async run() {
    const deps = await this.deps();
    const { cancelTestUser } = await import('../../../simulator/users.js');
    const user = await cancelTestUser(deps, { app: this.flags.app, user: this.args.user });
    if (!deps.json)
      deps.out.success(`Cancelled ${user.id} on ${user.plan}; access until ${user.expires_at ?? 'now'}.`);
    return user;
  }
}
