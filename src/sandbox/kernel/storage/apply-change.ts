import type { SQLInputValue, StatementSync } from 'node:sqlite';
import type { AppRecord, Change, DeliveryRecord } from './records.js';
import * as rows from './rows.js';

/** Deliveries kept per app for relay resume (docs/PROTOCOL.md, Relay stream). */
export const KEPT_DELIVERIES = 10_000;

/** What applying a change needs of the ledger. */
export interface ChangeTarget {
  sql(text: string): StatementSync;
  app(id: string): AppRecord | undefined;
  lastSeq(appId: string): number;
  forgetApp(id: string): void;
}

/** Writes one change (the current version's or an imported earlier one's) into the open transaction. */
export function applyChange(ledger: ChangeTarget, c: Change): void {
  switch (c.op) {
    case 'seed':
      ledger.sql(`INSERT OR REPLACE INTO meta (key, value) VALUES ('seed', ?)`).run(JSON.stringify(c.v));
      return;
    case 'user':
      return upsert(ledger, 'users', rows.users.columns, ['id'], rows.users.toRow(c.v));
    case 'app':
      return upsert(ledger, 'apps', rows.apps.columns, ['id'], rows.apps.toRow(c.v));
    case 'app-':
      return removeApp(ledger, c.id);
    case 'plan':
      return upsert(ledger, 'plans', rows.plans.columns, ['app_id', 'id'], rows.plans.toRow(c.v));
    case 'plan-':
      ledger.sql('DELETE FROM plans WHERE app_id = ? AND id = ?').run(c.app_id, c.id);
      return;
    case 'key':
      return upsert(ledger, 'api_keys', rows.apiKeys.columns, ['id'], rows.apiKeys.toRow(c.v));
    case 'key-':
      ledger.sql('DELETE FROM api_keys WHERE id = ?').run(c.id);
      return;
    case 'sub':
      return upsert(
        ledger,
        'subscriptions',
        rows.subscriptions.columns,
        ['app_id', 'user_id'],
        rows.subscriptions.toRow(c.v),
      );
    case 'token':
      return upsert(ledger, 'tokens', rows.tokens.columns, ['token'], rows.tokens.toRow(c.v));
    case 'token-':
      ledger.sql('DELETE FROM tokens WHERE token = ?').run(c.token);
      return;
    case 'delivery':
      return putDelivery(ledger, c.v);
    case 'pending':
      return upsert(
        ledger,
        'pending_deliveries',
        rows.pendingDeliveries.columns,
        ['delivery_id'],
        rows.pendingDeliveries.toRow(c.v),
      );
    case 'pending-':
      ledger.sql('DELETE FROM pending_deliveries WHERE delivery_id = ?').run(c.id);
      return;
    case 'attempt':
      ledger
        .sql(
          'INSERT OR REPLACE INTO delivery_attempts (delivery_id, attempt, at, url, response_status, error, latency_ms, response_excerpt) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(
          c.v.delivery_id,
          c.v.attempt,
          c.v.at,
          c.v.url,
          c.v.response_status,
          c.v.error,
          c.v.latency_ms ?? null,
          c.v.response_excerpt ?? null,
        );
      return;
  }
}

function upsert(
  ledger: ChangeTarget,
  table: string,
  columns: string[],
  key: string[],
  values: SQLInputValue[],
): void {
  ledger.sql(rows.upsertSql(table, columns, key)).run(...values);
}

function removeApp(ledger: ChangeTarget, id: string): void {
  const app = ledger.app(id);
  if (!app) return;
  for (const table of [
    'plans',
    'api_keys',
    'tokens',
    'deliveries',
    'delivery_seqs',
    'pending_deliveries',
    'payments',
    'payouts',
    'payment_behaviours',
  ])
    ledger.sql(`DELETE FROM ${table} WHERE app_id = ?`).run(id);
  ledger.sql('DELETE FROM subscriptions WHERE app_id = ?').run(id);
  ledger.sql('DELETE FROM users WHERE app_id = ?').run(id);
  ledger.sql('DELETE FROM apps WHERE id = ?').run(id);
  ledger.forgetApp(id);
}

/** Keeps `d` unless it is not newer than the app's newest (importing a change twice is harmless). */
function putDelivery(ledger: ChangeTarget, d: DeliveryRecord): void {
  if (d.seq <= ledger.lastSeq(d.app_id)) return;
  ledger
    .sql(
      `INSERT INTO deliveries (${rows.deliveries.columns.join(', ')}) VALUES (${rows.deliveries.columns.map(() => '?').join(', ')})`,
    )
    .run(...rows.deliveries.toRow(d));
  ledger
    .sql(
      'INSERT INTO delivery_seqs (app_id, last_seq) VALUES (?, ?) ON CONFLICT (app_id) DO UPDATE SET last_seq = excluded.last_seq',
    )
    .run(d.app_id, d.seq);
  // Older ones are dropped a hundred at a time; reads never look past the newest KEPT_DELIVERIES.
  if (d.seq % 100 === 0) {
    ledger.sql('DELETE FROM deliveries WHERE app_id = ? AND seq <= ?').run(d.app_id, d.seq - KEPT_DELIVERIES);
  }
}
