// The journal's records: what a line holds, and what `mkt webhooks deliveries` makes of them.

/** Where a delivery came from: the marketplace relay stream or the local HTTP receiver. */
export type DeliverySource = 'relay' | 'local';

/** The state of a delivery: `received` until it is forwarded, fails for good, is refused or filtered out. */
export type DeliveryStatus = 'received' | 'forwarded' | 'failed' | 'refused' | 'filtered';

/**
 * A journal line recording a delivery as it arrived: the exact body (as text when its bytes are
 * UTF-8, else `body_b64`) and its headers (their signature tells a replay under a new id).
 */
export interface ReceivedRecord {
  t: 'received';
  id: string;
  at: string;
  source: DeliverySource;
  seq?: number;
  event?: string;
  headers: Record<string, string>;
  body?: string;
  body_b64?: string;
  forward_to?: string;
}

/** The exact bytes of a received record's body. */
export function bodyBytes(record: ReceivedRecord): Buffer {
  return record.body_b64 !== undefined
    ? Buffer.from(record.body_b64, 'base64')
    : Buffer.from(record.body ?? '', 'utf8');
}

/** A journal line updating the state of a delivery named by id. */
export interface StatusRecord {
  t: 'status';
  id: string;
  at: string;
  status: DeliveryStatus;
  attempts?: number;
  response_status?: number;
  /** How long the handler took to answer, and the start of what it said (forward.ts EXCERPT_BYTES). */
  latency_ms?: number;
  response_excerpt?: string;
  error?: string;
  reason?: string;
  forward_to?: string;
}

/**
 * A journal line recording the relay position: the sequence number the relay stream told us it was at
 * when we connected without `Last-Event-ID` (or after a reset). It is the resume point before any
 * relay delivery has arrived, and is repeated at the top of each new file when the journal rotates.
 */
export interface PositionRecord {
  t: 'position';
  at: string;
  seq: number;
}

/** One journal line. */
export type JournalRecord = ReceivedRecord | StatusRecord | PositionRecord;

/** What `mkt webhooks deliveries` shows for one delivery: its received record folded with its last status. */
export interface DeliverySummary {
  id: string;
  event: string | null;
  source: DeliverySource;
  seq: number | null;
  received_at: string;
  status: DeliveryStatus;
  updated_at: string;
  attempts: number;
  response_status: number | null;
  latency_ms: number | null;
  response_excerpt: string | null;
  reason: string | null;
  forward_to: string | null;
}

/** The newest received record of `id` (a refused one may be followed by the verified one). */
export function receivedRecord(records: JournalRecord[], id: string): ReceivedRecord | undefined {
  return records.findLast((r): r is ReceivedRecord => r.t === 'received' && r.id === id);
}

/** Folds the journal into one summary per delivery, oldest first. */
export function summarize(records: JournalRecord[]): DeliverySummary[] {
  const byId = new Map<string, DeliverySummary>();
  for (const r of records) {
    if (r.t === 'received') {
      // A delivery refused for its signature does not hold its id: a verified one replaces it.
      if (byId.has(r.id) && byId.get(r.id)!.status !== 'refused') continue;
      byId.set(r.id, {
        id: r.id,
        event: r.event ?? null,
        source: r.source,
        seq: r.seq ?? null,
        received_at: r.at,
        status: 'received',
        updated_at: r.at,
        attempts: 0,
        response_status: null,
        latency_ms: null,
        response_excerpt: null,
        reason: null,
        forward_to: r.forward_to ?? null,
      });
      continue;
    }
    if (r.t !== 'status') continue;
    const s = byId.get(r.id);
    if (!s) continue;
    s.status = r.status;
    s.updated_at = r.at;
    s.attempts += r.attempts ?? 0;
    if (r.response_status !== undefined) s.response_status = r.response_status;
    if (r.latency_ms !== undefined) s.latency_ms = r.latency_ms;
    if (r.response_excerpt !== undefined || r.response_status !== undefined)
      s.response_excerpt = r.response_excerpt ?? null;
    s.reason = r.reason ?? r.error ?? (r.status === 'forwarded' ? null : s.reason);
    if (r.forward_to) s.forward_to = r.forward_to;
  }
  return [...byId.values()];
}

/** Request headers that carry a sender's credentials: kept out of the journal (forwarded as they came). */
const CREDENTIAL_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-api-key',
  'x-auth-token',
  'x-csrf-token',
]);

/** `record` as the journal keeps it: credential headers redacted (the record itself when it has none). */
export function forJournal(record: ReceivedRecord): ReceivedRecord {
  let headers: Record<string, string> | undefined;
  for (const name in record.headers) {
    if (!CREDENTIAL_HEADERS.has(name.toLowerCase())) continue;
    headers ??= { ...record.headers };
    headers[name] = '[redacted]';
  }
  return headers ? { ...record, headers } : record;
}
