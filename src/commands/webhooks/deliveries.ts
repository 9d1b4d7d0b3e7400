import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { flags } from '../../flags.js';

export default class WebhooksDeliveries extends BaseCommand<typeof WebhooksDeliveries> {
  static summary = 'List the deliveries recorded in the local journal by `mkt webhooks listen`.';
  static examples = [
    '<%= config.bin %> webhooks deliveries --status failed',
    '<%= config.bin %> webhooks deliveries --event subscription.created --limit 5 --json',
  ];
  static enableJsonFlag = true;
  static flags = {
    app: flags.app(),
    event: Flags.string({ description: 'only this event' }),
    status: Flags.string({
      description: 'only this status',
      options: ['received', 'forwarded', 'failed', 'refused', 'filtered'],
    }),
    limit: Flags.integer({ description: 'the newest N', default: 50, min: 1 }),
  };

  async run() {
    const deps = await this.deps();
    const { journalDir, readJournal, summarize } = await import('../../webhooks/journal.js');
    const { dataDir } = await import('../../paths.js');
    const app = this.flags.app ?? (await deps.config.get(deps.profile, 'app'));
    const dir = journalDir(dataDir(deps.env), app);
    const rows = summarize(await readJournal(dir))
      .filter((d) => !this.flags.event || d.event === this.flags.event)
      .filter((d) => !this.flags.status || d.status === this.flags.status)
      .slice(-this.flags.limit);
    if (!deps.json) {
      deps.out.table(rows, [
        { header: 'id', get: (d) => d.id },
        { header: 'event', get: (d) => d.event },
        { header: 'status', get: (d) => d.status },
        { header: 'received', get: (d) => d.received_at },
        { header: 'source', get: (d) => d.source },
        { header: 'attempts', get: (d) => d.attempts },
        { header: 'response', get: (d) => d.response_status },
        { header: 'reason', get: (d) => d.reason },
      ]);
      if (rows.length === 0) deps.out.info(`No deliveries in ${dir}.`);
    }
    return rows;
  }
}
