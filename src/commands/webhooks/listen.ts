import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { UsageError } from '../../errors.js';
import { flags } from '../../flags.js';
import { checkUrl, isLoopback } from '../../urls.js';

export default class WebhooksListen extends BaseCommand<typeof WebhooksListen> {
  static summary = "Receive the app's webhook deliveries, verify, journal and forward them.";
  static description = `Deliveries arrive on the marketplace relay stream and on a local receiver (127.0.0.1, any path).
Each one is checked (signature over the raw bytes; timestamp within --tolerance on the local receiver),
written to the journal before it is answered or forwarded, and forwarded with its exact bytes and
headers to --forward-to. A target that is down (refused, 5xx) is waited for with capped backoff for as
long as listen runs; a 4xx answer marks the delivery failed (\`mkt webhooks resend\`). Delivery is
at least once: de-duplicate on X-Marketplace-Delivery. A dropped relay connection resumes where it stopped.
The signing secret comes from --secret-env NAME, $MKT_WEBHOOK_SECRET, the credential store or the marketplace.
One listener per app: a second one on the same journal exits (1) naming the first; \`mkt webhooks deliveries\`
and \`mkt webhooks resend\` work beside it.`;
  static examples = [
    '<%= config.bin %> webhooks listen --forward-to http://localhost:3000/webhooks',
    '<%= config.bin %> webhooks listen --events subscription.created,subscription.cancelled --json',
    'MKT_WEBHOOK_SECRET=whsec_… <%= config.bin %> webhooks listen --no-relay --port 4242 --forward-to http://localhost:3000/hooks',
  ];
  static enableJsonFlag = true;
  static flags = {
    app: flags.app(),
    'forward-to': Flags.string({
      description: 'where to forward each verified delivery: a port (3000), localhost:3000/hooks or a URL',
    }),
    port: Flags.integer({
      description: 'port of the local receiver on 127.0.0.1 (0: any free port)',
      default: 0,
      min: 0,
      max: 65535,
    }),
    relay: Flags.boolean({
      description: 'receive from the marketplace relay stream (--no-relay: local receiver only)',
      default: true,
      allowNo: true,
    }),
    events: Flags.string({ description: 'only these events (comma-separated or repeated)', multiple: true }),
    'secret-env': Flags.string({
      description: 'name of the environment variable holding the signing secret',
    }),
    'print-secret': Flags.boolean({
      description: 'print the signing secret used for verification (stdout) and continue',
    }),
    tolerance: Flags.integer({
      description: 'accepted age of a delivery timestamp, in seconds',
      default: 300,
      min: 1,
    }),
    'forward-tries': Flags.integer({
      description: 'tries per forward before it is marked failed (default: retry while listen runs)',
      min: 1,
    }),
    'forward-backoff': Flags.integer({
      description: 'wait before the first forward retry, ms (doubles each time)',
      min: 1,
      hidden: true,
    }),
    'forward-backoff-max': Flags.integer({
      description: 'longest wait between forward retries, ms',
      min: 1,
      hidden: true,
    }),
    concurrency: Flags.integer({ description: 'forwards in flight at once', default: 8, min: 1, max: 256 }),
  };

  async run() {
    // Ctrl-C and SIGTERM are taken before anything is announced: whoever reads "Ready" may signal at once.
    const signal = this.signal;
    const deps = await this.deps();
    const f = this.flags;
    const { EVENT_NAMES } = await import('../../simulator/events.js');
    const { optionalAppId, resolveAppId } = await import('../../apps/resolve.js');
    const { listen } = await import('../../webhooks/listen/index.js');
    const { listenRenderer } = await import('../../webhooks/listen/render.js');
    const { DEFAULT_RETRY_POLICY } = await import('../../webhooks/listen/retry-policy.js');

    const events = new Set(
      (f.events ?? [])
        .flatMap((e) => e.split(','))
        .map((e) => e.trim())
        .filter(Boolean),
    );
    for (const e of events) {
      if (!(EVENT_NAMES as readonly string[]).includes(e)) {
        throw new UsageError(`Unknown event "${e}". Events: ${EVENT_NAMES.join(', ')}.`, {
          code: 'unknown_event',
        });
      }
    }
    const forwardTo = f['forward-to'] ? checkUrl(f['forward-to'], 'forward', '--forward-to') : undefined;
    const appId = f.relay
      ? await resolveAppId(deps, { app: f.app })
      : await optionalAppId(deps, { app: f.app });
    const renderer = listenRenderer(deps.out, { json: deps.json, appId });
    if (forwardTo && !isLoopback(forwardTo)) {
      const { redactUrl } = await import('../../api/redact.js');
      // First, before anything else is said: signed deliveries would leave this machine.
      renderer.render({
        type: 'warning',
        message: `--forward-to ${redactUrl(forwardTo.href)} is not on this machine: each verified delivery, signed and with its headers, is sent to ${forwardTo.host}.`,
      });
    }
    try {
      await listen(deps, {
        appId,
        relay: f.relay,
        port: f.port,
        forwardTo,
        events,
        secretEnv: f['secret-env'],
        printSecret: f['print-secret'],
        toleranceSeconds: f.tolerance,
        retry: {
          tries: f['forward-tries'],
          initialMs: f['forward-backoff'] ?? DEFAULT_RETRY_POLICY.initialMs,
          maxMs: f['forward-backoff-max'] ?? DEFAULT_RETRY_POLICY.maxMs,
        },
        concurrency: f.concurrency,
        signal,
        emit: renderer.render,
        backlog: () => deps.out.backlog(),
      });
    } finally {
      renderer.flush();
    }
    throw signal.reason;
  }
}
