import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import type { DeliveryRecord } from '../storage/records.js';

/** The start of a webhook URL's answer that an attempt keeps (docs/PROTOCOL.md, deliveries). */
export const RESPONSE_EXCERPT_BYTES = 2048;

/** The console's migration: what an attempt took and what the URL answered. */
export const ATTEMPT_DETAILS_MIGRATION = {
  name: 'delivery attempts: latency and the start of the answer',
  sql: `
    ALTER TABLE delivery_attempts ADD COLUMN latency_ms REAL;
    ALTER TABLE delivery_attempts ADD COLUMN response_excerpt TEXT;
  `,
};

/** One attempt as the API shows it. */
export interface AttemptView {
  at: string;
  status: number | null;
  latency_ms: number | null;
  error: string | null;
  response_excerpt?: string | null;
}

/**
 * Where a delivery stands: being retried, answered 2xx, given up, or never sent to a URL (the app had
 * no webhook URL: it went only to relay listeners, `mkt webhooks listen`, whose outcome is in their
 * journal).
 */
export const DELIVERY_STATES = ['pending', 'succeeded', 'failed', 'not_sent'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** A delivery as the API shows it (docs/PROTOCOL.md, deliveries). */
export interface DeliveryView {
  id: string;
  app_id: string;
  event: string;
  state: DeliveryState;
  created_at: string;
  url: string | null;
  attempt_count: number;
  last_attempt: AttemptView | null;
  next_attempt_at: string | null;
  attempts?: AttemptView[];
  body?: string;
}

/** Which deliveries a listing shows, and where it continues (`cursor`: the last sequence number shown). */
export interface DeliveryQuery {
  event?: string;
  state?: DeliveryState;
  limit: number;
  cursor?: number;
}

type Row = Record<string, Cell>;
type Cell = SQLInputValue | undefined;

const iso = (ms: Cell) => new Date(Number(ms)).toISOString();
const round = (ms: Cell) => (ms === null || ms === undefined ? null : Math.round(Number(ms) * 10) / 10);

const SUMMARY = `
  SELECT d.seq, d.id, d.app_id, d.event, d.created_at,
    p.due_at AS due_at, p.url AS pending_url,
    (SELECT COUNT(*) FROM delivery_attempts a WHERE a.delivery_id = d.id) AS attempt_count,
    EXISTS (SELECT 1 FROM delivery_attempts a WHERE a.delivery_id = d.id
            AND a.response_status BETWEEN 200 AND 299) AS ok,
    l.at AS l_at, l.url AS l_url, l.response_status AS l_status, l.error AS l_error, l.latency_ms AS l_latency
  FROM deliveries d
  LEFT JOIN pending_deliveries p ON p.delivery_id = d.id
  LEFT JOIN delivery_attempts l ON l.delivery_id = d.id
    AND l.attempt = (SELECT MAX(attempt) FROM delivery_attempts WHERE delivery_id = d.id)`;

const STATE_SQL = {
  pending: 'p.delivery_id IS NOT NULL',
  succeeded: `p.delivery_id IS NULL AND EXISTS (SELECT 1 FROM delivery_attempts a WHERE a.delivery_id = d.id
    AND a.response_status BETWEEN 200 AND 299)`,
  failed: `p.delivery_id IS NULL AND EXISTS (SELECT 1 FROM delivery_attempts a WHERE a.delivery_id = d.id)
    AND NOT EXISTS (SELECT 1 FROM delivery_attempts a WHERE a.delivery_id = d.id
    AND a.response_status BETWEEN 200 AND 299)`,
  // Never pending and never tried: the app had no webhook URL when it was made.
  not_sent: `p.delivery_id IS NULL AND NOT EXISTS (SELECT 1 FROM delivery_attempts a WHERE a.delivery_id = d.id)`,
} as const;

function stateOf(r: Row): DeliveryState {
  if (r.pending_url !== null) return 'pending';
  if (Number(r.ok)) return 'succeeded';
  return Number(r.attempt_count) === 0 ? 'not_sent' : 'failed';
}

function summary(r: Row): DeliveryView & { seq: number } {
  const pending = r.pending_url !== null;
  return {
    seq: Number(r.seq),
    id: String(r.id),
    app_id: String(r.app_id),
    event: String(r.event),
    state: stateOf(r),
    created_at: String(r.created_at),
    url: (r.l_url ?? r.pending_url ?? null) as string | null,
    attempt_count: Number(r.attempt_count),
    last_attempt:
      r.l_at === null
        ? null
        : {
            at: iso(r.l_at),
            status: r.l_status === null ? null : Number(r.l_status),
            latency_ms: round(r.l_latency),
            error: r.l_error as string | null,
          },
    next_attempt_at: pending && r.due_at !== null ? iso(r.due_at) : null,
  };
}

/**
 * The console's reads of the deliveries the sandbox keeps (the tables are the webhook sender's;
 * attempts are written as they happen, so these are never behind).
 */
export class DeliveryRecords {
  constructor(private readonly db: DatabaseSync) {}

  /** The app's deliveries, newest first. */
  list(
    appId: string,
    q: DeliveryQuery,
  ): { data: DeliveryView[]; has_more: boolean; next_cursor: string | null } {
    const where = ['d.app_id = ?'];
    const params: SQLInputValue[] = [appId];
    if (q.cursor !== undefined) {
      where.push('d.seq < ?');
      params.push(q.cursor);
    }
    if (q.event) {
      where.push('d.event = ?');
      params.push(q.event);
    }
    if (q.state) where.push(STATE_SQL[q.state]);
    const rows = this.db
      .prepare(`${SUMMARY} WHERE ${where.join(' AND ')} ORDER BY d.seq DESC LIMIT ?`)
      .all(...params, q.limit + 1) as Row[];
    const page = rows.slice(0, q.limit).map(summary);
    const more = rows.length > q.limit;
    return {
      data: page.map(({ seq: _seq, ...d }) => d),
      has_more: more,
      next_cursor: more ? String(page.at(-1)!.seq) : null,
    };
  }

  /** The stored delivery (its original envelope and signature), for a resend. */
  record(appId: string, id: string): DeliveryRecord | undefined {
    const r = this.db.prepare('SELECT * FROM deliveries WHERE app_id = ? AND id = ?').get(appId, id) as
      Row | undefined;
    return (
      r && {
        seq: Number(r.seq),
        id: String(r.id),
        app_id: String(r.app_id),
        event: String(r.event),
        created_at: String(r.created_at),
        body: String(r.body),
        signature: String(r.signature),
      }
    );
  }

  /** One delivery with every attempt and its body, or undefined. */
  get(
    appId: string,
    id: string,
  ): (DeliveryView & Required<Pick<DeliveryView, 'attempts' | 'body'>>) | undefined {
    const r = this.db.prepare(`${SUMMARY} WHERE d.app_id = ? AND d.id = ?`).get(appId, id) as Row | undefined;
    if (!r) return undefined;
    const { seq: _seq, ...d } = summary(r);
    const attempts = this.db
      .prepare(
        'SELECT at, response_status, error, latency_ms, response_excerpt FROM delivery_attempts WHERE delivery_id = ? ORDER BY attempt',
      )
      .all(id) as Row[];
    const body = this.db.prepare('SELECT body FROM deliveries WHERE id = ?').get(id) as Row;
    return {
      ...d,
      attempts: attempts.map((a) => ({
        at: iso(a.at),
        status: a.response_status === null ? null : Number(a.response_status),
        latency_ms: round(a.latency_ms),
        error: a.error as string | null,
        response_excerpt: a.response_excerpt as string | null,
      })),
      body: String(body.body),
    };
  }
}
