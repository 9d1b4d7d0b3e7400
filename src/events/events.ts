import { resolveAppId } from '../apps/resolve.js';
import type { Deps } from '../deps.js';
import { UsageError } from '../errors.js';
import { EVENT_NAMES } from '../wire.js';

/** One try to deliver an event to the app's webhook URL, as the marketplace recorded it. */
export interface DeliveryAttempt {
  at: string;
  /** The HTTP status the webhook URL answered, or null when it gave no answer. */
  status: number | null;
  latency_ms: number | null;
  error: string | null;
  /** The start of what the webhook URL answered (at most 2 KiB). */
  response_excerpt: string | null;
  [field: string]: unknown;
}

/** The marketplace's record of one event sent to the app's webhook URL (unknown fields are kept). */
export interface EventDelivery {
  id: string;
  event: string;
  state: 'pending' | 'succeeded' | 'failed' | 'not_sent' | string;
  created_at: string;
  url?: string | null;
  /** Every attempt, oldest first (in `get` and `resend`; a listing gives `last_attempt`). */
  attempts?: DeliveryAttempt[];
  attempt_count?: number;
  last_attempt?: Omit<DeliveryAttempt, 'response_excerpt'> | null;
  next_attempt_at?: string | null;
  /**
   * For a delivery not sent to a URL (`not_sent`: the app had no webhook URL), what this machine's
   * `mkt webhooks listen` journal says of it, or null when it holds nothing of it (added by mkt).
   */
  relay?: RelayOutcome | null;
  [field: string]: unknown;
}

/** What `mkt webhooks listen` recorded of a relayed delivery: its status and the handler's answer. */
export interface RelayOutcome {
  status: string;
  response_status: number | null;
  at: string;
}

/** The states a delivery can be in (docs/PROTOCOL.md, deliveries). */
export const DELIVERY_STATES = ['pending', 'succeeded', 'failed', 'not_sent'] as const;

type EventDeps = Pick<Deps, 'api' | 'config' | 'profile' | 'session' | 'env'>;

/**
 * Adds to each `not_sent` delivery (the app had no webhook URL: it went only over the relay) what
 * this machine's `mkt webhooks listen` journal of the app says of it. A journal that cannot be read
 * adds nothing: the marketplace's record stands on its own.
 */
async function withRelayOutcome(
  deps: EventDeps,
  app: string,
  deliveries: EventDelivery[],
): Promise<EventDelivery[]> {
  if (!deliveries.some((d) => d.state === 'not_sent')) return deliveries;
  let byId = new Map<string, RelayOutcome>();
  try {
    const { journalDir, readJournal, summarize } = await import('../webhooks/journal.js');
    const { dataDir } = await import('../platform/paths.js');
    const rows = summarize(await readJournal(journalDir(dataDir(deps.env), app)));
    byId = new Map(
      rows.map((r) => [r.id, { status: r.status, response_status: r.response_status, at: r.updated_at }]),
    );
  } catch {
    // No journal here (listen never ran on this machine, or elsewhere): nothing to add.
  }
  return deliveries.map((d) => (d.state === 'not_sent' ? { ...d, relay: byId.get(d.id) ?? null } : d));
}

const deliveriesPath = (app: string) => `/apps/${encodeURIComponent(app)}/deliveries`;

/** Checks a delivery id: the id `mkt events list` shows (dlv_…). */
function checkDeliveryId(id: string): string {
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(id)) {
    throw new UsageError(`"${id}" is not a delivery id (dlv_…).`, {
      code: 'invalid_delivery_id',
      hints: ['mkt events list'],
    });
  }
  return id;
}

/** The app's deliveries, newest first, optionally of one event or in one state; at most `limit`. */
export async function listEvents(
  deps: EventDeps,
  input: { app?: string; event?: string; state?: string; limit: number },
): Promise<EventDelivery[]> {
  if (input.event !== undefined && !(EVENT_NAMES as readonly string[]).includes(input.event)) {
    throw new UsageError(`Unknown event "${input.event}". Events: ${EVENT_NAMES.join(', ')}.`, {
      code: 'unknown_event',
    });
  }
  const app = await resolveAppId(deps, input);
  const path = deliveriesPath(app);
  const items: EventDelivery[] = [];
  let cursor: string | undefined;
  // Pages until `limit`: a listing of ten thousand deliveries is not fetched to show fifty.
  while (items.length < input.limit) {
    const query = { event: input.event, state: input.state, limit: Math.min(100, input.limit), cursor };
    const { data } = await deps.api.get<
      { data?: EventDelivery[]; has_more?: boolean; next_cursor?: string | null } | EventDelivery[]
    >(path, { query });
    const page = Array.isArray(data) ? data : (data?.data ?? []);
    items.push(...page);
    if (Array.isArray(data) || !data?.has_more || !data.next_cursor || page.length === 0) break;
    cursor = data.next_cursor;
  }
  return withRelayOutcome(deps, app, items.slice(0, input.limit));
}

/** One delivery with every attempt. */
export async function getEvent(deps: EventDeps, input: { app?: string; id: string }): Promise<EventDelivery> {
  const id = checkDeliveryId(input.id);
  const app = await resolveAppId(deps, input);
  const delivery = (await deps.api.get<EventDelivery>(`${deliveriesPath(app)}/${encodeURIComponent(id)}`))
    .data;
  return (await withRelayOutcome(deps, app, [delivery]))[0]!;
}

/**
 * Sends a delivery again to the app's webhook URL: the same id, event and data, a fresh timestamp
 * and signature. Answers the delivery with the new attempt.
 */
export async function resendEvent(
  deps: EventDeps,
  input: { app?: string; id: string },
): Promise<EventDelivery> {
  const id = checkDeliveryId(input.id);
  const app = await resolveAppId(deps, input);
  return (await deps.api.post<EventDelivery>(`${deliveriesPath(app)}/${encodeURIComponent(id)}/resend`)).data;
}

/** The newest attempt of a delivery, from its attempts or a listing's `last_attempt`. */
export function lastAttempt(delivery: EventDelivery): Partial<DeliveryAttempt> | undefined {
  return delivery.attempts?.at(-1) ?? delivery.last_attempt ?? undefined;
}
