import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { CheckFailedError } from '../../errors.js';
import { flags } from '../../flags.js';

export default class SimulatorCheck extends BaseCommand<typeof SimulatorCheck> {
  static summary = 'May a test user use a feature? Exit 0 when allowed, 3 when not, with the reason.';
  static description =
    "The one access rule: the plan lists the feature, the status is not expired, and access has not ended (expires_at, in business time). Says too when the user is over the plan's API call limit (the app enforces it).";
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
    const result = await checkEntitlement(deps, { app: f.app, userId: f.user, feature: f.feature });
    if (!result.allowed) {
      throw new CheckFailedError(
        'not_allowed',
        `${f.user} may not use "${f.feature}": ${result.message.replace(/\.$/, '')} (${result.reason}).`,
        {
          hints: [`mkt simulator users get ${f.user}`],
          document: result,
        },
      );
    }
    if (!deps.json) {
      deps.out.success(`${f.user} may use "${f.feature}": ${result.message}`);
      if (result.over_limit)
        deps.out.warn(
          `${f.user} is over the plan's API call limit (${result.usage}); the app decides what that means.`,
        );
    }
    return result;
  }
}
