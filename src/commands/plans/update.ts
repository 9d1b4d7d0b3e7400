import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { arg, flags } from '../../flags.js';
import { planUpdateBody, updatePlan } from '../../plans/plans.js';
import { showPlan } from '../../plans/render.js';

export default class PlansUpdate extends BaseCommand<typeof PlansUpdate> {
  static summary = 'Change a pricing plan.';
  static description =
    'Only the fields given change; --feature replaces the whole list. The id and kind of a plan cannot change: create a new plan instead.';
  static examples = [
    '<%= config.bin %> plans update pro-monthly --price 12.50',
    '<%= config.bin %> plans update pro-monthly --feature export --feature api --api-call-limit none',
    '<%= config.bin %> plans update pro-monthly --trial-days 14',
    '<%= config.bin %> plans update legacy --archived',
  ];
  static enableJsonFlag = true;
  static args = { plan: arg({ required: true, description: 'plan id, such as pro-monthly' }) };
  static flags = {
    app: flags.app(),
    name: Flags.string({ description: 'new display name' }),
    price: Flags.string({ description: "new price as a decimal, in the plan's currency unless --currency" }),
    currency: Flags.string({ description: "ISO 4217 currency code of --price (default: the plan's)" }),
    feature: Flags.string({
      multiple: true,
      description: 'feature the plan grants (repeatable; replaces the list)',
    }),
    'api-call-limit': Flags.string({ description: 'API calls allowed per period, or "none"' }),
    'trial-days': Flags.integer({
      min: 0,
      max: 365,
      description: 'days of free trial for a new subscriber (monthly and annual plans; 0: none)',
    }),
    archived: Flags.boolean({
      allowNo: true,
      description: 'archive the plan (no new subscribers), or --no-archived',
    }),
  };

  async run() {
    const deps = await this.deps();
    const plan = await updatePlan(deps, {
      app: this.flags.app,
      id: this.args.plan,
      body: planUpdateBody(this.flags),
    });
    if (!deps.json) {
      deps.out.success(`Updated plan ${plan.id}.`);
      showPlan(deps, plan);
    }
    return plan;
  }
}
