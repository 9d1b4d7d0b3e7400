import { BaseCommand } from '../../base-command.js';
import { arg, flags } from '../../flags.js';
import { getPlan } from '../../plans/plans.js';
import { showPlan } from '../../plans/render.js';

export default class PlansGet extends BaseCommand<typeof PlansGet> {
  static summary = 'Show a pricing plan.';
  static examples = [
    '<%= config.bin %> plans get pro-monthly --app app_123',
    '<%= config.bin %> plans get free --json',
  ];
  static enableJsonFlag = true;
  static args = { plan: arg({ required: true, description: 'plan id, such as pro-monthly' }) };
  static flags = { app: flags.app() };

  async run() {
    const deps = await this.deps();
    const plan = await getPlan(deps, { app: this.flags.app, id: this.args.plan });
    if (!deps.json) showPlan(deps, plan);
    return plan;
  }
}
