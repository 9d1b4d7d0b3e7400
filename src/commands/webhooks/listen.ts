import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { MktError, UsageError } from '../../errors.js';
import type { Deps } from '../../deps.js';
import { flags } from '../../flags.js';
import type { DeliveryReport, ListenEvent, ListenOptions } from '../../webhooks/listen.js';

export default class WebhooksListen extends BaseCommand<typeof WebhooksListen> {
  static summary = "Receive the app's webhook deliveries, verify, journal and forward them.";
  static description = `Deliveries arrive on the marketplace relay stream and on a local receiver (127.0.0.1, any path).
Each one is checked (signature over the raw bytes; timestamp within --tolerance on the local receiver),
written to the journal before it is forwarded, and forwarded with its exact bytes and headers to
--forward-to, retrying with backoff. A dropped relay connection reconnects and resumes where it stopped.
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
    'forward-to': Flags.string({ description: 'URL to forward each verified delivery to' }),
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
      description: 'tries per forward before it is marked failed',
      default: 5,
      min: 1,
      max: 20,
    }),
    'forward-backoff': Flags.integer({
      description: 'wait before the first forward retry, ms (doubles each time)',
      default: 1000,
      min: 1,
      hidden: true,
    }),
    concurrency: Flags.integer({ description: 'forwards in flight at once', default: 8, min: 1, max: 256 }),
  };

  async run() {
    const deps = await this.deps();
    const f = this.flags;
    const { resolveAppId } = await import('../../apps/resolve.js');
    const { dataDir } = await import('../../paths.js');
    const { journalDir } = await import('../../webhooks/journal.js');
    const { JournalLock } = await import('../../platform/lock-file.js');
    const { EVENT_NAMES } = await import('../../simulator/events.js');

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
    let forwardTo: URL | undefined;
    if (f['forward-to']) {
      try {
        forwardTo = new URL(
          /^https?:\/\//.test(f['forward-to']) ? f['forward-to'] : `http://${f['forward-to']}`,
        );
      } catch {
        throw new UsageError(`--forward-to "${f['forward-to']}" is not a URL.`, {
          hints: ['--forward-to http://localhost:3000/webhooks'],
        });
      }
    }
    const appId = f.relay
      ? await resolveAppId(deps, f.app)
      : (f.app ?? (await deps.config.get(deps.profile, 'app')));
    let relay: ListenOptions['relay'];
    if (f.relay) {
      const credential = await deps.session.credential();
      if (!credential) {
        throw new MktError('not_logged_in', 'The relay stream needs a credential.', 4, {
          hints: ['mkt login --with-api-key', 'mkt webhooks listen --no-relay   (local receiver only)'],
        });
      }
      const { userAgent } = await import('../../version.js');
      relay = {
        url: deps.api.url(`/apps/${encodeURIComponent(appId!)}/webhooks/stream`),
        env: deps.env,
        headers: {
          'user-agent': userAgent(),
          ...(credential.kind === 'token'
            ? { authorization: `Bearer ${credential.secret}` }
            : { 'x-api-key': credential.secret }),
        },
      };
    }
    // One listener per journal: a second one would forward every delivery again.
    const dir = journalDir(dataDir(deps.env), appId);
    const lock = await JournalLock.acquire(dir, {
      forwardTo: forwardTo?.href,
      app: appId,
      warn: (m) => deps.out.warn(m),
    });
    try {
      return await this.listen(deps, { appId, dir, relay, forwardTo, events });
    } finally {
      await lock.release();
    }
  }

  private async listen(
    deps: Deps,
    input: {
      appId: string | undefined;
      dir: string;
      relay: ListenOptions['relay'];
      forwardTo: URL | undefined;
      events: Set<string>;
    },
  ) {
    const f = this.flags;
    const { appId, relay, forwardTo, events } = input;
    const { DeliveryLog } = await import('../../webhooks/journal.js');
    const { resolveWebhookSecret } = await import('../../webhooks/secret.js');
    const { WebhookListener } = await import('../../webhooks/listen.js');
    const { secret, source } = await resolveWebhookSecret(deps, {
      appId,
      secretEnv: f['secret-env'],
    });
    if (f['print-secret']) {
      // With --json every stdout line is a JSON document, this one too.
      deps.out.data(deps.json ? JSON.stringify({ type: 'secret', secret, source }) : secret);
      if (!deps.json) deps.out.info(`(signing secret from ${source})`);
    }
    const journal = await DeliveryLog.open(input.dir, {
      warn: (m) => deps.out.warn(m),
    });
    const out = deps.out;
    const listener = new WebhookListener({
      journal,
      clock: deps.clock,
      secret,
      toleranceSeconds: f.tolerance,
      relay,
      port: f.port,
      forwardTo,
      events,
      forwardTries: f['forward-tries'],
      forwardBackoffMs: f['forward-backoff'],
      concurrency: f.concurrency,
      emit: (e) => {
        render(e);
        if (e.type === 'fatal') stopNow?.('fatal');
      },
    });
    let history = 0;
    let stopNow: ((why: NodeJS.Signals | 'fatal') => void) | undefined;
    // Delivery lines are written to stdout in one write per turn of the event loop, not one each.
    let batch = '';
    const flush = () => {
      if (batch) out.data(batch);
      batch = '';
    };
    const data = (text: string) => {
      if (!batch) setImmediate(flush);
      batch += `${text}\n`;
      if (batch.length > 65_536) flush();
    };
    const render = (e: ListenEvent) => {
      if (deps.json) {
        if (e.type === 'ready' || 'report' in e)
          data(JSON.stringify('report' in e ? { type: e.type, ...e.report } : e));
        else if (e.type === 'reconnecting' || e.type === 'warning' || e.type === 'fatal')
          out.info(JSON.stringify(e));
        return;
      }
      switch (e.type) {
        case 'ready':
          out.success(
            `Ready. ${e.relay ? `Relay: ${appId}${e.resume_after !== null ? ` (resuming after #${e.resume_after})` : e.position !== null ? ` (new deliveries after #${e.position})` : ''}. ` : ''}Local receiver: ${e.receiver}`,
          );
          out.info(
            e.forward_to
              ? `Forwarding to ${e.forward_to}`
              : 'No --forward-to: deliveries are verified and journaled only.',
          );
          if (e.pending) out.info(`${e.pending} delivery(ies) left from the last run are forwarded first.`);
          out.info(out.dim(`Journal: ${journal.dir}   Ctrl-C to stop.`));
          return;
        case 'connected':
          if (e.after !== null) out.info(out.dim(`Relay connected (after #${e.after}).`));
          return;
        case 'reconnecting':
          out.warn(
            `Relay connection lost (${e.error}); reconnecting in ${(e.delay_ms / 1000).toFixed(1)} s (attempt ${e.attempt}).`,
          );
          return;
        case 'forward_retry':
          out.warn(
            `Forward of ${e.id} failed (${e.error}); retry ${e.attempt} in ${(e.delay_ms / 1000).toFixed(1)} s.`,
          );
          return;
        case 'warning':
          out.warn(e.message);
          return;
        case 'fatal':
          out.warn(`The relay stream refused us: ${e.message}`);
          return;
        case 'received':
          return;
        case 'filtered':
          if (e.report.reason === 'history') history += 1;
          else data(line(e.report));
          if (history === 1 && e.report.reason === 'history') {
            out.info(
              out.dim(
                'Older relay deliveries (before this first run) are journaled, not forwarded: mkt webhooks deliveries --status filtered',
              ),
            );
          }
          return;
        case 'verified':
          if (!forwardTo) data(line(e.report));
          return;
        default:
          data(line(e.report));
      }
    };
    const line = (r: DeliveryReport) =>
      [
        r.time.slice(11, 19),
        (r.event ?? '-').padEnd(22),
        r.id,
        r.source,
        `signature:${r.signature}`,
        r.status === 'forwarded'
          ? `→ ${r.response_status}${r.attempts > 1 ? ` after ${r.attempts} tries` : ''}`
          : r.status + (r.reason ? ` (${r.reason})` : ''),
      ].join('  ');

    // Listen for Ctrl-C before announcing "ready": whoever reads it may signal at once.
    const stopped = new Promise<NodeJS.Signals | 'fatal'>((resolve) => {
      stopNow = resolve;
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    try {
      const starting = listener.start();
      starting.catch(() => undefined); // a failure after Ctrl-C won the race is of no interest
      await Promise.race([starting, stopped]);
    } catch (err) {
      await listener.stop().catch(() => {});
      flush();
      const status = (err as { status?: number }).status;
      if (status === 401 || status === 403) {
        throw new MktError('relay_refused', `The relay stream refused us: ${(err as Error).message}`, 4, {
          hints: ['mkt auth status', 'mkt webhooks listen --no-relay'],
        });
      }
      if (status === 404) {
        throw new MktError('relay_not_found', `No relay stream for ${appId}: ${(err as Error).message}`, 1, {
          hints: ['mkt apps list', 'mkt webhooks listen --no-relay'],
        });
      }
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
        throw new UsageError(`Port ${f.port} is in use.`, { hints: ['mkt webhooks listen --port 0'] });
      }
      throw err;
    }
    const signal = await stopped;
    if (!deps.json) out.info('Stopping: finishing forwards in flight…');
    process.once('SIGINT', () => process.exit(130)); // a second Ctrl-C does not wait
    await listener.stop();
    flush();
    if (!deps.json) out.info('Journal flushed. Bye.');
    if (signal === 'fatal') {
      throw new MktError('relay_refused', 'The relay stream stopped accepting our credential.', 4, {
        hints: ['mkt auth status'],
      });
    }
    return this.exit(signal === 'SIGINT' ? 130 : 143);
  }
}
