import { BaseCommand } from '../../base-command.js';
import { arg, flags } from '../../flags.js';

export default class EventsResend extends BaseCommand<typeof EventsResend> {
  static summary =
    "Send a delivery again to the app's webhook URL (same id and data, fresh timestamp and signature).";
  static description =
    'The marketplace makes one new attempt now and records it with the others; the answer is the delivery with that attempt. Receivers de-duplicate on X-Marketplace-Delivery, which stays the same.';
  static examples = ['<%= config.bin %> events resend dlv_8f2c41d09a7e'];
  static enableJsonFlag = true;
  static args = {
    id: arg({ description: 'delivery id (dlv_…), as `mkt events list` shows it', required: true }),
  };
  static flags = { app: flags.app() };

  async run() {
    const deps = await this.deps();
    const { resendEvent, lastAttempt } = await import('../../events/events.js');
    const { describeAttempt, printable } = await import('../../events/render.js');
    const delivery = await resendEvent(deps, { app: this.flags.app, id: this.args.id });
    if (!deps.json) {
      const attempt = lastAttempt(delivery);
      const said = `Resent ${printable(delivery.id)} (${printable(delivery.event)}): ${describeAttempt(attempt)}.`;
      if (delivery.state === 'succeeded') deps.out.success(said);
      else deps.out.warn(`${said} State: ${printable(delivery.state)}.`);
    }
    return delivery;
  }
}
