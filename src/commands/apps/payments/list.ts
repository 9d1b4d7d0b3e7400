import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base-command.js';
import { flags } from '../../../flags.js';
import { formatMoney } from '../../../plans/money.js';

export default class AppsPaymentsList extends BaseCommand<typeof AppsPaymentsList> {
  static summary = "List the app's charges: initial, renewal and retry; succeeded or declined.";
  static examples = [
    '<%= config.bin %> apps payments list',
    '<%= config.bin %> apps payments list --user usr_123 --json',
  ];
  static enableJsonFlag = true;
  static flags = {
    app: flags.app(),
    user: Flags.string({ description: "only this user's charges (usr_…)" }),
  };

  async run() {
    const deps = await this.deps();
    const { listPayments } = await import('../../../payments/payments.js');
    const payments = await listPayments(deps, { app: this.flags.app, user: this.flags.user });
    if (!deps.json) {
      deps.out.table(payments, [
        { header: 'id', get: (p) => p.id },
        { header: 'at', get: (p) => p.created_at },
        { header: 'user', get: (p) => p.user_id },
        { header: 'plan', get: (p) => p.plan },
        { header: 'kind', get: (p) => p.kind },
        { header: 'amount', get: (p) => formatMoney(p) },
        { header: 'outcome', get: (p) => p.outcome },
      ]);
    }
    return payments;
  }
}
