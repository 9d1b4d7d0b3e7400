import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { MktError, UsageError } from '../../errors.js';
import { flags } from '../../flags.js';

export default class WebhooksResend extends BaseCommand<typeof WebhooksResend> {
  static summary = 'Forward one journaled delivery again, with its exact bytes and headers.';
  static examples = [
    '<%= config.bin %> webhooks resend dlv_123',
    '<%= config.bin %> webhooks resend dlv_123 --forward-to http://localhost:3000/webhooks',
  ];
  static enableJsonFlag = true;
  static args = {
    id: Args.string({ required: true, description: 'delivery id (see mkt webhooks deliveries)' }),
  };
  static flags = {
    app: flags.app(),
    'forward-to': Flags.string({ description: 'target URL (default: the one recorded with the delivery)' }),
  };

  async run() {
    const deps = await this.deps();
    const { appendRecord, journalDir, readJournal, summarize } = await import('../../webhooks/journal.js');
    const { forwardDelivery } = await import('../../webhooks/forward.js');
    const { lockHolder } = await import('../../platform/lock-file.js');
    const { dataDir } = await import('../../paths.js');
    const app = this.flags.app ?? (await deps.config.get(deps.profile, 'app'));
    const dir = journalDir(dataDir(deps.env), app);
    const records = await readJournal(dir);
    const received = records.find((r) => r.t === 'received' && r.id === this.args.id);
    if (!received || received.t !== 'received') {
      throw new MktError('delivery_not_found', `No delivery ${this.args.id} in the journal ${dir}.`, 1, {
        hints: ['mkt webhooks deliveries', ...(app ? [] : ['mkt webhooks resend ID --app APP_ID'])],
      });
    }
    const summary = summarize(records).find((s) => s.id === received.id)!;
    if (summary.status === 'refused') {
      throw new UsageError(`Delivery ${received.id} was refused (${summary.reason}); it is never forwarded.`);
    }
    if (summary.status === 'received') {
      // A listener that forwards owns every delivery still "received": it has it queued or is retrying
      // it. Resending now would make a second copy race its forward and leave the journal with
      // whichever outcome was written last.
      const holder = await lockHolder(dir);
      if (holder?.forward_to) {
        throw new MktError(
          'delivery_pending',
          `Delivery ${received.id} is still being forwarded to ${holder.forward_to} by \`mkt webhooks listen\` (pid ${holder.pid}); it retries it until it is forwarded or failed.`,
          1,
          {
            hints: [
              `mkt webhooks deliveries${app ? ` --app ${app}` : ''}   (see when it is forwarded or failed)`,
              `mkt webhooks resend ${received.id}${app ? ` --app ${app}` : ''}   (after that, or once the listener is stopped)`,
            ],
          },
        );
      }
    }
    const target = this.flags['forward-to'] ?? summary.forward_to;
    if (!target) throw new UsageError(`Delivery ${received.id} was never forwarded; pass --forward-to URL.`);
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      throw new UsageError(`--forward-to "${target}" is not a URL.`);
    }
    const result = await forwardDelivery(url, received.body, received.headers);
    await appendRecord(dir, {
      t: 'status',
      id: received.id,
      at: new Date(deps.clock.now()).toISOString(),
      status: result.ok ? 'forwarded' : 'failed',
      attempts: 1,
      ...(result.status !== null ? { response_status: result.status } : {}),
      ...(result.ok ? {} : { error: result.error ?? `HTTP ${result.status}` }),
      forward_to: url.href,
    });
    const out = {
      id: received.id,
      event: summary.event,
      forward_to: url.href,
      ok: result.ok,
      response_status: result.status,
      error: result.error,
    };
    if (!result.ok) {
      throw new MktError(
        'forward_failed',
        `Resending ${received.id} to ${url.href} failed: ${result.error ?? `HTTP ${result.status}`}.`,
        1,
        {
          hints: [`mkt webhooks resend ${received.id} --forward-to URL`],
        },
      );
    }
    if (!deps.json)
      deps.out.success(`Resent ${received.id} (${summary.event}) to ${url.href}: ${result.status}.`);
    return out;
  }
}
