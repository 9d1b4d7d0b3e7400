import { BaseCommand } from '../../base-command.js';
import { arg, flags } from '../../flags.js';

export default class EventsGet extends BaseCommand<typeof EventsGet> {
  static summary =
    'Show one delivery with every attempt: time, status, latency, error and what the URL answered.';
  static examples = [
    '<%= config.bin %> events get dlv_8f2c41d09a7e',
    '<%= config.bin %> events get dlv_8f2c41d09a7e --json',
  ];
  static enableJsonFlag = true;
  static args = {
    id: arg({ description: 'delivery id (dlv_…), as `mkt events list` shows it', required: true }),
  };
  static flags = { app: flags.app() };

  async run() {
    const deps = await this.deps();
    const { getEvent } = await import('../../events/events.js');
    const delivery = await getEvent(deps, { app: this.flags.app, id: this.args.id });
    if (!deps.json) {
      const { showEvent } = await import('../../events/render.js');
      showEvent(deps.out, delivery);
    }
    return delivery;
  }
}
