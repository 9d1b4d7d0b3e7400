import type { Deps } from '../../deps.js';
import { AuthError, MktError, UsageError } from '../../errors.js';
import type { ListenEvent } from './events.js';
import type { RetryPolicy } from './retry-policy.js';

/** What `mkt webhooks listen` was asked to do. */
export interface ListenInput {
  appId: string | undefined;
  /** Receive from the relay stream (needs an app and a credential). */
  relay: boolean;
  port: number;
  forwardTo?: URL;
  events: Set<string>;
  secretEnv?: string;
  printSecret: boolean;
  toleranceSeconds: number;
  retry: RetryPolicy;
  concurrency: number;
  /** Aborted to stop (Ctrl-C, SIGTERM): forwards in flight finish, the journal is flushed. */
  signal: AbortSignal;
  emit(event: ListenEvent): void;
  /** While the output cannot keep up, a promise of when it can (Output.backlog). */
  backlog?(): Promise<void> | undefined;
}

/**
 * Runs listen until `signal` is aborted or the relay refuses the credential for good: one listener
 * per journal (lock), the secret, the journal, the engine; resolves once stopped and flushed.
 */
export async function listen(deps: Deps, input: ListenInput): Promise<void> {
  const { appId } = input;
  const { dataDir } = await import('../../platform/paths.js');
  const { DeliveryLog, journalDir, journalFolder } = await import('../journal.js');
  const { JournalLock } = await import('../../platform/lock-file.js');
  const { fetchWebhookSecret, isExplicitSecret, keepWebhookSecret, resolveWebhookSecret } =
    await import('../secret.js');
  const { ListenEngine } = await import('./engine.js');
  const { redactUrl } = await import('../../api/redact.js');

  if (input.relay && !(await deps.session.credential())) {
    throw new AuthError('not_logged_in', 'The relay stream needs a credential.', {
      hints: ['mkt login --with-api-key', 'mkt webhooks listen --no-relay   (local receiver only)'],
    });
  }
  // One listener per journal: a second one would forward every delivery again.
  const dir = journalDir(dataDir(deps.env), appId);
  // A password in the target is kept where credentials are; the journal names the URL with `***`.
  if (input.forwardTo?.password) {
    const { accounts } = await import('../../credentials/accounts.js');
    const account = accounts.forwardPassword(deps.profile, redactUrl(input.forwardTo.href));
    await deps.credentials.set(account, input.forwardTo.password);
  }
  // Only where the credentials may live: no link, this user's, nobody else's to write.
  await journalFolder(dir, (message) => input.emit({ type: 'warning', message }), { create: true });
  const lock = await JournalLock.acquire(dir, {
    forwardTo: input.forwardTo && redactUrl(input.forwardTo.href),
    app: appId,
    warn: (message) => input.emit({ type: 'warning', message }),
  });
  try {
    const { secret, source } = await resolveWebhookSecret(deps, { app: appId, secretEnv: input.secretEnv });
    if (input.printSecret) input.emit({ type: 'secret', secret, source });
    const journal = await DeliveryLog.open(dir, {
      warn: (message) => input.emit({ type: 'warning', message }),
    });
    const defaultApp = await deps.config.get(deps.profile, 'app');
    const fatal = new AbortController();
    const engine = new ListenEngine({
      journal,
      clock: deps.clock,
      secret: {
        current: secret,
        // A rotated secret is read again; one given explicitly is the user's to change.
        ...(appId && !isExplicitSecret(source)
          ? {
              fetch: async () => {
                const current = await fetchWebhookSecret(deps, appId);
                await keepWebhookSecret(deps, appId, current);
                return current;
              },
            }
          : {}),
      },
      toleranceSeconds: input.toleranceSeconds,
      relay:
        input.relay && appId
          ? {
              label: deps.api.url(`/apps/${encodeURIComponent(appId)}/webhooks/stream`).href,
              open: (headers, signal) =>
                deps.api.stream(`/apps/${encodeURIComponent(appId)}/webhooks/stream`, { headers, signal }),
            }
          : undefined,
      port: input.port,
      forwardTo: input.forwardTo,
      events: input.events,
      retry: input.retry,
      concurrency: input.concurrency,
      resendHint: (id) =>
        `mkt webhooks resend ${id}${appId && appId !== defaultApp ? ` --app ${appId}` : ''}`,
      emit: (e) => {
        if (e.type === 'fatal') fatal.abort(e);
        input.emit(e);
      },
      backlog: input.backlog,
    });
    const stop = AbortSignal.any([input.signal, fatal.signal]);
    try {
      if (!stop.aborted) await Promise.race([engine.start(), aborted(stop)]);
      await aborted(stop);
    } catch (err) {
      if (!stop.aborted) throw relayError(err, appId, input.port);
    } finally {
      await engine.stop();
    }
    if (fatal.signal.aborted) throw relayError(fatal.signal.reason, appId, input.port);
  } finally {
    await lock.release();
  }
}

const aborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });

/** The error for a relay that refused us, or a port in use. */
function relayError(err: unknown, appId: string | undefined, port: number): unknown {
  const e = err as { status?: number; message: string; hints?: string[]; code?: string };
  if (e.status === 401 || e.status === 403) {
    return new AuthError('relay_refused', `The relay stream refused our credential: ${e.message}`, {
      hints: e.hints?.length ? e.hints : ['mkt auth status', 'mkt login'],
    });
  }
  if (e.status === 404) {
    return new MktError('relay_not_found', `No relay stream for ${appId}: ${e.message}`, 1, {
      hints: ['mkt apps list', 'mkt webhooks listen --no-relay'],
    });
  }
  if (e.code === 'EADDRINUSE') {
    return new UsageError(`Port ${port} is in use.`, { hints: ['mkt webhooks listen --port 0'] });
  }
  return err;
}
