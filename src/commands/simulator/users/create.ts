import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base-command.js';
import { flags } from '../../../flags.js';
import { PAYMENT_OPTIONS } from '../../../simulator/users.js';

export default class SimulatorUsersCreate extends BaseCommand<typeof SimulatorUsersCreate> {
  static summary =
    'Create a test user subscribed to a plan (a paid plan is charged, or starts a trial; sends subscription.created).';
  static examples = [
    '<%= config.bin %> simulator users create --plan pro-monthly',
    '<%= config.bin %> simulator users create --plan pro-monthly --trial-days 14 --payment declines_renewals',
    '<%= config.bin %> simulator users create --plan free --email t@example.test --json',
  ];
  static enableJsonFlag = true;
  static flags = {
    app: flags.app(),
    plan: Flags.string({ description: 'plan id', required: true }),
    status: Flags.string({
      description: 'force a status after subscribing (edge cases)',
      options: ['active', 'trialing', 'past_due', 'cancelled', 'expired'],
    }),
    'trial-days': Flags.integer({
      description: "free trial length in days (default: the plan's)",
      min: 0,
      max: 365,
    }),
    payment: Flags.string({
      description: 'how charges go: succeeds (default), declines, declines_renewals',
      options: [...PAYMENT_OPTIONS],
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
      trialDays: f['trial-days'],
      payment: f.payment,
    });
    if (!deps.json) {
      deps.out.data(user.id);
      deps.out.success(`Test user ${user.email} on ${user.plan} (${user.status}).`);
    }
    return user;
  }
}
