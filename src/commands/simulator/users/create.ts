import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base-command.js';
import { flags } from '../../../flags.js';

export default class SimulatorUsersCreate extends BaseCommand<typeof SimulatorUsersCreate> {
  static summary = 'Create a test user on a plan (a paid plan emits subscription.created).';
  static examples = [
    '<%= config.bin %> simulator users create --plan pro-monthly',
    '<%= config.bin %> simulator users create --plan free --status trialing --email t@example.test --json',
  ];
  static enableJsonFlag = true;
  static flags = {
    app: flags.app(),
    plan: Flags.string({ description: 'plan id', required: true }),
    status: Flags.string({
      description: 'subscription status',
      default: 'active',
      options: ['active', 'trialing', 'past_due', 'cancelled', 'expired'],
    }),
    email: Flags.string({ description: 'e-mail address (default: generated)' }),
    name: Flags.string({ description: 'display name (default: generated)' }),
  };

  async run() {
    const deps = await this.deps();
    const { createTestUser } = await import('../../../simulator/simulator.js');
    const f = this.flags;
    const user = await createTestUser(deps, {
      app: f.app,
      plan: f.plan,
      status: f.status,
      email: f.email,
      name: f.name,
    });
    if (!deps.json) {
      deps.out.data(user.id);
      deps.out.success(`Test user ${user.email} on ${user.plan} (${user.status}).`);
    }
    return user;
  }
}
