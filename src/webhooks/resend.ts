import { HEADER } from '../wire.js';
import type { Deps } from '../deps.js';
import { CheckFailedError, MktError, UsageError } from '../errors.js';

/** What `mkt webhooks resend` was asked: one delivery by id, or every failed one. */
export interface ResendInput {
  appId: string | undefined;
  id?: string;
  allFailed?: boolean;
  forwardTo?: string;
  secretEnv?: string;
}

/** The outcome of one resend. */
export interface ResendResult {
  id: string;
  event: string | null;
  forward_to: string;
  ok: boolean;
  response_status: number | null;
  /** The start of what the target answered (its first 2 KiB), as the journal keeps it. */
  response_excerpt: string | null;
  error: string | null;
}

/**
 * Forwards journaled deliveries again with their exact bytes and headers, and journals the outcome.
 * A delivery refused for its signature is verified again with the app's current secret first.
 */
export async function resend(deps: Deps, input: ResendInput): Promise<ResendResult[]> {
  const { journalDir, journalFolder } = await import('./journal.js');
  const { withFileLock } = await import('../platform/lock-file.js');
  const { dataDir } = await import('../platform/paths.js');
  const { join } = await import('node:path');
  const dir = journalDir(dataDir(deps.env), input.appId);
  await journalFolder(dir, (message) => deps.out.warn(message), { create: true });
  // One resend per journal at a time: a second one reads the journal once the first wrote its
  // outcomes, so two `resend --status failed` never both forward the same delivery.
  return withFileLock(join(dir, 'resend.lock'), deps.clock, () => resendLocked(deps, input, dir), {
    waitMs: 300_000,
  });
}

async function resendLocked(deps: Deps, input: ResendInput, dir: string): Promise<ResendResult[]> {
  const { appendRecord, bodyBytes, readJournal, receivedRecord, summarize } = await import('./journal.js');
  const { forwardTo, restamp, RESTAMP_AFTER_MS } = await import('./forward.js');
  const { parseEnvelope } = await import('./signature.js');
  const { redactUrl } = await import('../api/redact.js');
  const { lockHolder } = await import('../platform/lock-file.js');
  const { dataDir } = await import('../platform/paths.js');
  const { appId } = input;
  const app = appId ? ` --app ${appId}` : '';
  const records = await readJournal(dir);
  const summaries = summarize(records);
  const chosen = input.allFailed
    ? summaries.filter((s) => s.status === 'failed')
    : summaries.filter((s) => s.id === input.id);
  if (!input.allFailed && chosen.length === 0) {
    // The id may be in another app's journal (listen ran with another --app): name that app.
    const elsewhere = await journalsHolding(dataDir(deps.env), input.id!, appId);
    throw new MktError(
      'delivery_not_found',
      `No delivery ${input.id} in the journal of ${appId ?? 'deliveries received without an app'} (${dir}).`,
      1,
      {
        hints: [
          ...elsewhere.map(
            (other) => `mkt webhooks resend ${input.id} --app ${other}   (it is in that journal)`,
          ),
          `mkt webhooks deliveries${app}   (the deliveries this journal holds)`,
        ],
      },
    );
  }
  const holder = await lockHolder(dir);
  const results: ResendResult[] = [];
  for (const summary of chosen) {
    const received = receivedRecord(records, summary.id)!;
    if (summary.status === 'refused') {
      if (summary.reason !== 'bad_signature')
        throw new UsageError(
          `Delivery ${summary.id} was refused (${summary.reason}); it is never forwarded.`,
        );
      await verifyAgain(deps, input, summary.id, bodyBytes(received), received.headers);
    }
    if (summary.status === 'received' && holder?.forward_to) {
      // A listener that forwards owns every delivery still "received": it has it queued or is
      // retrying it. Resending now would race its forward.
      throw new MktError(
        'delivery_pending',
        `Delivery ${summary.id} is still being forwarded to ${holder.forward_to} by \`mkt webhooks listen\` (pid ${holder.pid}); it retries it until it is forwarded or failed.`,
        1,
        {
          hints: [`mkt webhooks deliveries${app}   (see when it is forwarded or failed)`],
        },
      );
    }
    const target = input.forwardTo ?? summary.forward_to;
    if (!target) throw new UsageError(`Delivery ${summary.id} was never forwarded; pass --forward-to URL.`);
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      throw new UsageError(`--forward-to "${target}" is not a URL.`);
    }
    await withPassword(deps, url);
    const body = bodyBytes(received);
    // A delivery older than the restamp age goes with a fresh timestamp and signature (restamp):
    // the handler's replay window would refuse the journal's bytes.
    const envelope = parseEnvelope(body);
    const late =
      'timestamp' in envelope &&
      Math.abs(deps.clock.now() - Date.parse(envelope.timestamp)) >= RESTAMP_AFTER_MS;
    const sent = restamp(
      late ? await signingSecret(deps, input) : undefined,
      body,
      received.headers,
      deps.clock.now(),
    );
    const forward = forwardTo(url);
    const result = await forward(sent.body, sent.headers);
    await forward.close();
    const error = result.ok ? null : (result.error ?? `HTTP ${result.status}`);
    await appendRecord(dir, {
      t: 'status',
      id: summary.id,
      at: new Date(deps.clock.now()).toISOString(),
      status: result.ok ? 'forwarded' : 'failed',
      attempts: 1,
      ...(result.status !== null ? { response_status: result.status } : {}),
      latency_ms: result.ms,
      // What the handler answered, kept as listen keeps it (shown escaped and cut short).
      ...(result.excerpt !== null ? { response_excerpt: result.excerpt } : {}),
      ...(error ? { error } : {}),
      forward_to: redactUrl(url.href),
    });
    results.push({
      id: summary.id,
      event: summary.event,
      forward_to: redactUrl(url.href),
      ok: result.ok,
      response_status: result.status,
      response_excerpt: result.excerpt,
      error,
    });
  }
  return results;
}

/**
 * The password of a target as the journal names it (`***`) from the credential store; a password
 * given with --forward-to is kept there for the next resend.
 */
async function withPassword(deps: Deps, url: URL): Promise<void> {
  if (!url.password) return;
  const { accounts } = await import('../credentials/accounts.js');
  const { redactUrl } = await import('../api/redact.js');
  const account = accounts.forwardPassword(deps.profile, redactUrl(url.href));
  if (url.password !== '***') return deps.credentials.set(account, url.password);
  const password = await deps.credentials.get(account);
  if (password === null)
    throw new UsageError(
      `The password of ${url.href} is not in the credential store (profile "${deps.profile}"); give the target again with it.`,
      {
        code: 'forward_password_missing',
        hints: ['mkt webhooks resend ID --forward-to https://user:PASSWORD@host/path'],
      },
    );
  url.password = password;
}

/** The apps (other than `except`) whose journal holds delivery `id`. */
async function journalsHolding(data: string, id: string, except: string | undefined): Promise<string[]> {
  const { readdir } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const { readJournal } = await import('./journal.js');
  const names = await readdir(join(data, 'webhooks')).catch(() => [] as string[]);
  const found: string[] = [];
  for (const name of names) {
    if (name === except || !/^app_[\w-]+$/.test(name)) continue;
    const records = await readJournal(join(data, 'webhooks', name)).catch(() => []);
    if (records.some((r) => 'id' in r && r.id === id)) found.push(name);
  }
  return found;
}

/** The app's current signing secret (from the marketplace), or the one given explicitly. */
async function signingSecret(deps: Deps, input: ResendInput): Promise<string> {
  const { fetchWebhookSecret, resolveWebhookSecret } = await import('./secret.js');
  const explicit = input.secretEnv !== undefined || deps.env.MKT_WEBHOOK_SECRET !== undefined;
  return input.appId && !explicit
    ? fetchWebhookSecret(deps, input.appId)
    : (await resolveWebhookSecret(deps, { app: input.appId, secretEnv: input.secretEnv })).secret;
}

/** Verifies refused bytes with the current secret (read again unless given explicitly). */
async function verifyAgain(
  deps: Deps,
  input: ResendInput,
  id: string,
  body: Buffer,
  headers: Record<string, string>,
): Promise<void> {
  const { checkDelivery } = await import('./signature.js');
  const secret = await signingSecret(deps, input);
  const check = checkDelivery({
    secret,
    body,
    signature: headers[HEADER.signature],
    now: deps.clock.now(),
  });
  if (!check.ok) {
    throw new CheckFailedError(
      check.reason,
      `Delivery ${id} does not verify with the current signing secret either (${check.message}); it is not forwarded.`,
      {
        hints: [
          `mkt webhooks listen${input.appId ? ` --app ${input.appId}` : ''} --print-secret   (the secret listen verifies with)`,
        ],
      },
    );
  }
}
