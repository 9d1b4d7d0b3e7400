import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { CheckFailedError } from '../../errors.js';
import { flags } from '../../flags.js';

const REASONS: Record<string, string> = {
  feature_in_plan: 'the plan includes it',
  feature_not_in_plan: 'the plan does not include it',
  no_entitlement: 'the user has no plan on this app',
};

export default class SimulatorCheck extends BaseCommand<typeof SimulatorCheck> {
  static summary = 'May a test user use a feature? Exit 0 when allowed, 3 when not, with the reason.';
  static examples = ['<%= config.bin %> simulator check --user usr_123 --feature export'];
  static enableJsonFlag = true;
  static flags = {
    app: flags.app(),
    user: flags.testUser(),
    feature: Flags.string({ description: 'feature id', required: true }),
  };

  async run() {
    const deps = await this.deps();
    const { checkEntitlement } = await import('../../simulator/simulator.js');
    const f = this.flags;
    const result = await checkEntitlement(deps, {
      app: f.app,
      userId: f.user,
      feature: f.feature,
    });
    const why =
      REASONS[result.reason] ?? result.reason.replace(/^status_/, 'the subscription is ').replace(/_/g, ' ');
    if (!result.allowed) {
      throw new CheckFailedError(
        'not_allowed',
        `${f.user} may not use "${f.feature}": ${why} (${result.reason}).`,
        {
          hints: [`mkt simulator users create --plan PLAN`],
          document: result,
        },
      );
    }
    if (!deps.json) deps.out.success(`${f.user} may use "${f.feature}": ${why}.`);
    return result;
  }
}
