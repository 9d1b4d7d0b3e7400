import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base-command.js';
import { arg, flags } from '../../../flags.js';
import { PAYMENT_OPTIONS } from '../../../simulator/users.js';

export default class SimulatorUsersUpdate extends BaseCommand<typeof SimulatorUsersUpdate> {
  static summary =
    "Change a test user's plan (sends the plan change's events), payment behaviour, or status.";
  static description =
    'A new plan takes effect at once: subscription.cancelled (plan_changed) for the old paid plan, then subscription.created; a paid plan is charged now (declined: nothing changes). --status forces a status for edge cases, with the events of the transition it implies.';
  static examples = [
    '<%= config.bin %> simulator users update usr_123 --plan pro-annual',
    '<%= config.bin %> simulator users update usr_123 --payment declines_renewals',
    '<%= config.bin %> simulator users update usr_123 --status past_due --json',
  ];
  static enableJsonFlag = true;
  static args = { user: arg({ description: 'test user id (usr_…)', required: true }) };
  static flags = {
    app: flags.app(),
    plan: Flags.string({ description: 'move to this plan (id)' }),
    payment: Flags.string({ description: 'how charges go from now on', options: [...PAYMENT_OPTIONS] }),
    status: Flags.string({
      description: 'force a status (edge cases)',
      options: ['active', 'trialing', 'past_due', 'cancelled', 'expired'],
    }),
  };

  async run() {
    const deps = await this.deps();
    const { updateTestUser, testUserFields } = await import('../../../simulator/users.js');
    const f = this.flags;
    const user = await updateTestUser(deps, {
      app: f.app,
      user: this.args.user,
      plan: f.plan,
      payment: f.payment,
      status: f.status,
    });
    if (!deps.json) {
      deps.out.fields(testUserFields(user));
      deps.out.success(`Updated ${user.id}.`);
    }
    return user;
  }
}
