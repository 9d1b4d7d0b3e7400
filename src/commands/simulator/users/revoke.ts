import { BaseCommand } from '../../../base-command.js';
import { arg, flags } from '../../../flags.js';

export default class SimulatorUsersRevoke extends BaseCommand<typeof SimulatorUsersRevoke> {
  static summary =
    'The test user removes the app: their tokens stop working, their streams close, user.revoked is sent.';
  static examples = [
    '<%= config.bin %> simulator users revoke usr_123',
    '<%= config.bin %> simulator users revoke usr_123 --json',
  ];
  static enableJsonFlag = true;
  static args = { user: arg({ description: 'test user id (usr_…)', required: true }) };
  static flags = { app: flags.app() };

  async run() {
    const deps = await this.deps();
    const { revokeTestUser } = await import('../../../simulator/users.js');
    const result = await revokeTestUser(deps, { app: this.flags.app, user: this.args.user });
    if (!deps.json)
      deps.out.success(`${result.user_id} removed the app; ${result.tokens_revoked} token(s) revoked.`);
    return result;
  }
}
