import { BaseCommand } from '../../../base-command.js';
import { flags } from '../../../flags.js';

export default class SimulatorUsersList extends BaseCommand<typeof SimulatorUsersList> {
  static summary = "List the app's test users with their plan, status and payment behaviour.";
  static examples = [
    '<%= config.bin %> simulator users list',
    '<%= config.bin %> simulator users list --json',
  ];
  static enableJsonFlag = true;
  static flags = { app: flags.app() };

  async run() {
    const deps = await this.deps();
    const { listTestUsers } = await import('../../../simulator/users.js');
    const users = await listTestUsers(deps, { app: this.flags.app });
    if (!deps.json) {
      deps.out.table(users, [
        { header: 'id', get: (u) => u.id },
        { header: 'email', get: (u) => u.email },
        { header: 'plan', get: (u) => u.plan },
        { header: 'status', get: (u) => u.status },
        { header: 'expires', get: (u) => u.expires_at },
        { header: 'payment', get: (u) => u.payment_behaviour },
      ]);
    }
    return users;
  }
}
