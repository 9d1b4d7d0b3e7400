import { BaseCommand } from '../../../base-command.js';
import { CheckFailedError } from '../../../errors.js';
import { flags } from '../../../flags.js';

export default class AppsPaymentsStatus extends BaseCommand<typeof AppsPaymentsStatus> {
  static summary = "Show whether the app's payment account is linked (exit 3 when not).";
  static examples = [
    '<%= config.bin %> apps payments status',
    '<%= config.bin %> apps payments status --json',
  ];
  static enableJsonFlag = true;
  static flags = { app: flags.app() };

  async run() {
    const deps = await this.deps();
    const { payoutsStatus } = await import('../../../payments/payments.js');
    const payouts = await payoutsStatus(deps, { app: this.flags.app });
    if (!payouts.linked) {
      throw new CheckFailedError(
        'payouts_not_linked',
        `App ${payouts.app_id} has no linked payment account, so it cannot sell paid plans.`,
        {
          hints: [`mkt apps payments link --app ${payouts.app_id}`],
          document: payouts,
        },
      );
    }
    if (!deps.json) {
      deps.out.fields([
        ['App', payouts.app_id],
        ['Account', payouts.account_id],
        ['Linked', payouts.linked_at],
      ]);
    }
    return payouts;
  }
}
