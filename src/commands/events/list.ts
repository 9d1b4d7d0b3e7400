import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { flags } from '../../flags.js';

export default class EventsList extends BaseCommand<typeof EventsList> {
  static summary = "List the marketplace's deliveries of events to the app's webhook URL, newest first.";
  static description =
    'The marketplace records every event it sends to the webhook URL, with each attempt and what the URL answered. This is its record, not the local journal of `mkt webhooks listen` (that is `mkt webhooks deliveries`).';
  static examples = [
    '<%= config.bin %> events list',
    '<%= config.bin %> events list --state failed --event subscription.created --json',
  ];
  static enableJsonFlag = true;
  static flags = {
    app: flags.app(),
    event: Flags.string({ description: 'only this event (e.g. subscription.created)' }),
    state: Flags.string({
      description: 'only deliveries in this state',
      options: ['pending', 'succeeded', 'failed', 'not_sent'],
    }),
    limit: Flags.integer({ description: 'the newest N', default: 50, min: 1, max: 10_000 }),
  };

  async run() {
    const deps = await this.deps();
    const { listEvents } = await import('../../events/events.js');
    const deliveries = await listEvents(deps, {
      app: this.flags.app,
      event: this.flags.event,
      state: this.flags.state,
      limit: this.flags.limit,
    });
    if (!deps.json) {
      const { showEventList } = await import('../../events/render.js');
      showEventList(deps.out, deliveries);
    }
    return deliveries;
  }
}
