import { BaseCommand } from '../../base-command.js';
import { flags } from '../../flags.js';
import { listPlans } from '../../plans/plans.js';
import { planColumns } from '../../plans/render.js';

export default class PlansList extends BaseCommand<typeof PlansList> {
  static summary = 'List the pricing plans of an app.';
  static description =
    'On a terminal an aligned table; piped, one tab-separated line per plan (id, name, kind, price, api calls, archived, subscribers); --json the API objects, prices in minor units.';
  static examples = ['<%= config.bin %> plans list --app app_123', '<%= config.bin %> plans list --json'];
  static enableJsonFlag = true;
  static flags = { app: flags.app() };

  async run() {
    const deps = await this.deps();
    const plans = await listPlans(deps, { app: this.flags.app });
    if (!deps.json) deps.out.table(plans, planColumns);
    return plans;
  }
}
