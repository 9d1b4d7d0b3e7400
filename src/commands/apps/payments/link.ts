import { BaseCommand } from '../../../base-command.js';
import { flags } from '../../../flags.js';

export default class AppsPaymentsLink extends BaseCommand<typeof AppsPaymentsLink> {
  static summary = "Link the app's payment processor account, so that it can sell paid plans.";
  static description =
    "Opens the processor's connect page on a terminal (the sandbox plays the processor); off a terminal prints its URL. Approve there, then check with mkt apps payments status.";
  static examples = [
    '<%= config.bin %> apps payments link',
    '<%= config.bin %> apps payments link --app app_123 --json',
  ];
  static enableJsonFlag = true;
  static flags = { app: flags.app() };

  async run() {
    const deps = await this.deps();
    const { linkPayouts } = await import('../../../payments/payments.js');
    const link = await linkPayouts(deps, { app: this.flags.app });
    if (deps.json) return link;
    deps.out.data(link.url);
    if (deps.out.interactive) {
      await deps
        .openBrowser(link.url)
        .catch(() => deps.out.warn('Could not open a browser; open the URL above.'));
    }
    deps.out.info(`Approve on that page, then: mkt apps payments status --app ${link.app_id}`);
    return link;
  }
}
