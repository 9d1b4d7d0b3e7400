import { Flags } from '@oclif/core';
import { optionalAppId } from '../../apps/resolve.js';
import { checkUrl } from '../../urls.js';
import { BaseCommand } from '../../base-command.js';
import { MktError, UsageError } from '../../errors.js';
import { arg, flags } from '../../flags.js';
import { oneLine, safeText } from '../../output/safe-text.js';
import type { ResendResult } from '../../webhooks/resend.js';

export default class WebhooksResend extends BaseCommand<typeof WebhooksResend> {
  static summary = 'Forward journaled deliveries again, with their exact bytes and headers.';
  static examples = [
    '<%= config.bin %> webhooks resend dlv_123',
    '<%= config.bin %> webhooks resend dlv_123 --forward-to http://localhost:3000/webhooks',
    '<%= config.bin %> webhooks resend --status failed',
  ];
  static enableJsonFlag = true;
  static args = {
    id: arg({ description: 'delivery id (see mkt webhooks deliveries)' }),
  };
  static flags = {
    app: flags.app(),
    'forward-to': Flags.string({ description: 'target URL (default: the one recorded with the delivery)' }),
    status: Flags.string({
      description: 'resend every delivery with this status instead of one ID',
      options: ['failed'],
    }),
    'secret-env': Flags.string({
      description: 'name of the environment variable holding the signing secret (refused deliveries)',
    }),
  };

  async run() {
    const deps = await this.deps();
    const { resend } = await import('../../webhooks/resend.js');
    const appId = await optionalAppId(deps, { app: this.flags.app });
    const app = appId ? ` --app ${appId}` : '';
    if (!this.args.id === !this.flags.status) {
      throw new UsageError('Name one delivery ID, or --status failed for all failed ones.', {
        hints: [
          `mkt webhooks deliveries${app}   (the ids)`,
          ...(this.flags.status ? [] : [`mkt webhooks resend --status failed${app}`]),
        ],
      });
    }
    const results = await resend(deps, {
      appId,
      id: this.args.id,
      allFailed: this.flags.status === 'failed',
      forwardTo:
        this.flags['forward-to'] && checkUrl(this.flags['forward-to'], 'forward', '--forward-to').href,
      secretEnv: this.flags['secret-env'],
    });
    const failed = results.filter((r) => !r.ok);
    if (!deps.json) {
      for (const r of results) {
        if (r.ok) deps.out.success(`Resent ${r.id} (${r.event}) to ${r.forward_to}: ${r.response_status}.`);
        else deps.out.warn(`Resending ${r.id} to ${r.forward_to} failed: ${failure(r)}.`);
      }
      if (results.length === 0) deps.out.info('No failed deliveries to resend.');
    }
    if (failed.length > 0) {
      const one = failed.length === 1 && this.args.id;
      throw new MktError(
        'forward_failed',
        one
          ? `Resending ${failed[0]!.id} to ${failed[0]!.forward_to} failed: ${failure(failed[0]!)}.`
          : `${failed.length} of ${results.length} deliveries could not be resent.`,
        1,
        // Not the same command again: what the target answered, then a working target.
        { hints: [`mkt webhooks deliveries --status failed${app}   (each failure and its answer)`] },
      );
    }
    return this.args.id ? results[0] : results;
  }
}

/** Why a resend failed, with the first words the handler answered (escaped, cut short), as listen says it. */
function failure(r: ResendResult): string {
  const answer = oneLine(r.response_excerpt);
  const error = safeText(r.error ?? 'failed');
  return answer ? `${error}; it answered: ${answer}` : error;
}
