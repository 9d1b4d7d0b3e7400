import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { CheckFailedError, ExitCode, UsageError } from '../../errors.js';
import { flags } from '../../flags.js';
import { checkUrl, isLoopback } from '../../urls.js';
import { DELIVERY_TIMEOUT_MS, TIMESTAMP_TOLERANCE_S } from '../../wire/delivery.js';

export default class WebhooksTest extends BaseCommand<typeof WebhooksTest> {
  static summary = 'Grade a webhook handler against every way a real delivery arrives, and say what to fix.';
  static description = `Sends the handler a fixed battery of deliveries, one after another, each signed as the
marketplace signs it, and grades each answer: a valid delivery of each event and one of them again
(2xx); forged, missing, malformed and tampered signatures, stale and future timestamps (4xx, never
5xx); an unknown event, an unknown field, a delivery of the largest size, events out of order
(2xx). Each answer is timed against the marketplace's delivery timeout. Exit 0 when every case
passes, 1 when any fails, so it can stand in a CI job. The secret comes from --secret-env NAME,
$MKT_WEBHOOK_SECRET, the credential store or the marketplace, as for \`webhooks listen\`.
A handler that passes: docs/webhooks.md, "Your webhook handler".`;
  static examples = [
    '<%= config.bin %> webhooks test --forward-to 3000',
    '<%= config.bin %> webhooks test --forward-to localhost:3000/webhooks --json',
    '<%= config.bin %> sandbox exec -- <%= config.bin %> webhooks test --forward-to 3000/webhooks',
  ];
  static enableJsonFlag = true;
  static flags = {
    app: flags.app(),
    'forward-to': Flags.string({
      description: 'the handler: a port (3000), localhost:3000/hooks or a URL on this machine',
      required: true,
    }),
    'allow-remote': Flags.boolean({
      description: 'allow a --forward-to that is not on this machine (signed deliveries go there)',
    }),
    'secret-env': Flags.string({
      description: 'name of the environment variable holding the signing secret',
      // The name listen, verify and resend take; --secret-from-env reads as well.
      aliases: ['secret-from-env'],
    }),
    tolerance: Flags.integer({
      description:
        "the handler's timestamp tolerance, in seconds (the stale and future cases lie just past it)",
      default: TIMESTAMP_TOLERANCE_S,
      min: 1,
    }),
    'delivery-timeout': Flags.integer({
      description: "the marketplace's delivery timeout in seconds; an answer slower than half of it is slow",
      default: DELIVERY_TIMEOUT_MS / 1000,
      min: 1,
    }),
    wait: Flags.integer({
      description: 'how long to wait for a handler that is still starting (refuses connections), in seconds',
      default: 10,
      min: 0,
    }),
  };

  async run() {
    const signal = this.signal;
    const deps = await this.deps();
    const f = this.flags;
    const target = checkUrl(f['forward-to'], 'forward', '--forward-to');
    if (!isLoopback(target)) {
      const { redactUrl } = await import('../../api/redact.js');
      if (!f['allow-remote'])
        throw new UsageError(
          `--forward-to ${redactUrl(target.href)} is not on this machine; the battery's signed deliveries would go to ${target.host}.`,
          {
            code: 'remote_target',
            hints: [`mkt webhooks test --forward-to ${f['forward-to']} --allow-remote`],
          },
        );
      deps.out.warn(
        `--forward-to ${redactUrl(target.href)} is not on this machine: the battery's deliveries, signed with the app's secret, go to ${target.host}.`,
      );
    }
    const { testHandler } = await import('../../webhooks/test/index.js');
    const report = await testHandler(deps, {
      target,
      app: f.app,
      secretEnv: f['secret-env'],
      toleranceS: f.tolerance,
      timeoutMs: f['delivery-timeout'] * 1000,
      waitMs: f.wait * 1000,
      signal,
    });
    if (!deps.json) {
      const { render } = await import('../../webhooks/test/render.js');
      render(deps.out, report);
    }
    if (!report.ok) {
      const failed = report.cases.filter((c) => c.verdict === 'fail').map((c) => c.id);
      throw new CheckFailedError(
        'handler_failed',
        `${report.failed} of ${report.cases.length} cases failed (${failed.join(', ')}); each FIX says what to change.`,
        { document: report, exitCode: ExitCode.error },
      );
    }
    return report;
  }
}
