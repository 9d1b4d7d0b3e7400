import { BaseCommand } from '../../base-command.js';
import { arg, flags } from '../../flags.js';
import { deletePlan } from '../../plans/plans.js';

export default class PlansDelete extends BaseCommand<typeof PlansDelete> {
  static summary = 'Delete a pricing plan; a plan with subscribers is archived instead.';
  static description =
    'An archived plan keeps its subscribers but takes no new ones. Asks for confirmation on a terminal; elsewhere --yes is required.';
  static examples = [
    '<%= config.bin %> plans delete legacy --app app_123',
    '<%= config.bin %> plans delete legacy --yes --json',
  ];
  static enableJsonFlag = true;
  static args = { plan: arg({ required: true, description: 'plan id, such as pro-monthly' }) };
  static flags = { app: flags.app(), yes: flags.yes() };

  async run() {
    const deps = await this.deps();
    const result = await deletePlan(deps, { app: this.flags.app, id: this.args.plan, yes: this.flags.yes });
    const { id } = result;
    if (!deps.json) {
      if (result.archived) {
        deps.out.warn(
          `Plan ${id} has ${result.plan?.subscribers ?? 'some'} subscriber(s), so it was archived, not deleted: it takes no new subscribers.`,
        );
      } else deps.out.success(`Deleted plan ${id}.`);
    }
    return result;
  }
}
