import { BILLING_MIGRATION } from './billing-schema.js';
import { ATTEMPT_DETAILS_MIGRATION } from '../deliveries/delivery-records.js';

/**
 * The sandbox's schema, one migration per entry, applied in order inside one transaction each and
 * recorded in `PRAGMA user_version`. Append a new entry to change the schema; never edit a shipped
 * one (a data folder may already be at its version). Rooms of the sandbox (billing, console) add
 * their own tables here.
 */
export interface Migration {
  /** What the migration is for, in a few words. */
  name: string;
  sql: string;
}

/** How many request-log rows are kept; past it the oldest are dropped. */
export const REQUEST_LOG_ROWS = 10_000;

export const MIGRATIONS: readonly Migration[] = [
  {
    name: 'marketplace records, deliveries, request log',
    sql: `
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
      CREATE TABLE users (
        id TEXT PRIMARY KEY, email TEXT NOT NULL, name TEXT NOT NULL, app_id TEXT,
        created_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX users_by_app ON users (app_id);
      CREATE TABLE apps (
        id TEXT PRIMARY KEY, owner_id TEXT NOT NULL, name TEXT NOT NULL, client_id TEXT NOT NULL UNIQUE,
        client_secret TEXT NOT NULL, redirect_uris TEXT NOT NULL, webhook_url TEXT, embed_url TEXT,
        webhook_secret TEXT NOT NULL, created_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX apps_by_owner ON apps (owner_id);
      CREATE TABLE plans (
        app_id TEXT NOT NULL, id TEXT NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,
        price TEXT, features TEXT NOT NULL, api_call_limit INTEGER, archived INTEGER NOT NULL,
        created_at TEXT NOT NULL, PRIMARY KEY (app_id, id)
      ) STRICT;
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY, app_id TEXT NOT NULL, mode TEXT NOT NULL, secret TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX api_keys_by_app ON api_keys (app_id);
      CREATE TABLE subscriptions (
        app_id TEXT NOT NULL, user_id TEXT NOT NULL, plan TEXT NOT NULL, status TEXT NOT NULL,
        expires_at TEXT, cancelled_at TEXT, api_calls INTEGER NOT NULL, created_at TEXT NOT NULL,
        next_transition_at INTEGER, PRIMARY KEY (app_id, user_id)
      ) STRICT;
      CREATE INDEX subscriptions_by_plan ON subscriptions (app_id, plan);
      CREATE INDEX subscriptions_by_next_transition ON subscriptions (next_transition_at)
        WHERE next_transition_at IS NOT NULL;
      CREATE TABLE tokens (
        token TEXT PRIMARY KEY, kind TEXT NOT NULL, app_id TEXT NOT NULL, user_id TEXT NOT NULL,
        scopes TEXT NOT NULL, expires_at INTEGER, family TEXT NOT NULL
      ) STRICT;
      CREATE INDEX tokens_by_family ON tokens (family);
      CREATE INDEX tokens_by_app ON tokens (app_id);
      CREATE TABLE deliveries (
        app_id TEXT NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL UNIQUE, event TEXT NOT NULL,
        created_at TEXT NOT NULL, body TEXT NOT NULL, signature TEXT NOT NULL, PRIMARY KEY (app_id, seq)
      ) STRICT;
      CREATE TABLE delivery_seqs (app_id TEXT PRIMARY KEY, last_seq INTEGER NOT NULL) STRICT;
      CREATE TABLE pending_deliveries (
        delivery_id TEXT PRIMARY KEY, app_id TEXT NOT NULL, url TEXT NOT NULL,
        attempt INTEGER NOT NULL, due_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX pending_deliveries_by_due ON pending_deliveries (due_at);
      CREATE TABLE delivery_attempts (
        delivery_id TEXT NOT NULL, attempt INTEGER NOT NULL, at INTEGER NOT NULL, url TEXT NOT NULL,
        response_status INTEGER, error TEXT, PRIMARY KEY (delivery_id, attempt)
      ) STRICT;
      CREATE TRIGGER deliveries_drop_attempts AFTER DELETE ON deliveries BEGIN
        DELETE FROM delivery_attempts WHERE delivery_id = old.id;
      END;
      CREATE TABLE request_log (
        id INTEGER PRIMARY KEY, at INTEGER NOT NULL, app_id TEXT, method TEXT NOT NULL,
        path TEXT NOT NULL, status INTEGER NOT NULL, duration_ms REAL NOT NULL
      ) STRICT;
      CREATE INDEX request_log_by_app_status_path ON request_log (app_id, status, path);
      CREATE TRIGGER request_log_bounded AFTER INSERT ON request_log BEGIN
        DELETE FROM request_log WHERE id <= new.id - ${REQUEST_LOG_ROWS};
      END;
    `,
  },
  {
    name: 'refresh reuse interval: when a refresh token was spent, and the pair it was spent for',
    sql: `
      ALTER TABLE tokens ADD COLUMN spent_at INTEGER;
      ALTER TABLE tokens ADD COLUMN successor TEXT;
    `,
  },
  BILLING_MIGRATION,
  ATTEMPT_DETAILS_MIGRATION,
  {
    // The console's request log is kept in memory (src/sandbox/logs/request-log.ts,
    // docs/DECISIONS.md §8): a row per request would put a commit and an fsync behind every read.
    name: 'the request log lives in memory: its table, never written, goes',
    sql: `
      DROP TRIGGER request_log_bounded;
      DROP INDEX request_log_by_app_status_path;
      DROP TABLE request_log;
    `,
  },
];
