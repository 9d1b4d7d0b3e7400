import { Flags } from '@oclif/core';
import { optionalAppId } from '../../apps/resolve.js';
import { BaseCommand } from '../../base-command.js';
import { flags } from '../../flags.js';
import { oneLine } from '../../output/safe-text.js';
import type { DeliveryStatus } from '../../webhooks/journal.js';

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
    const { journaledDeliveries } = await import('../../webhooks/deliveries.js');
    const { dir, rows } = await journaledDeliveries(deps, {
      appId: await optionalAppId(deps, { app: this.flags.app }),
      event: this.flags.event,
      status: this.flags.status as DeliveryStatus | undefined,
      limit: this.flags.limit,
    });
    if (!deps.json) {
      deps.out.table(rows, [
        { header: 'id', get: (d) => d.id },
        { header: 'event', get: (d) => d.event },
        { header: 'status', get: (d) => d.status },
        { header: 'received', get: (d) => d.received_at },
        { header: 'source', get: (d) => d.source },
        { header: 'attempts', get: (d) => d.attempts },
        { header: 'response', get: (d) => d.response_status },
        { header: 'ms', get: (d) => d.latency_ms },
        { header: 'answer', get: (d) => oneLine(d.response_excerpt) },
        { header: 'reason', get: (d) => d.reason },
      ]);
      if (rows.length === 0) deps.out.info(`No deliveries in ${dir}.`);
    }
    return rows;
  }
}
