/**
 * The billing room's schema: one migration appended to the sandbox's list. Subscriptions keep living
 * in the `subscriptions` table (one row per user and app); billing adds the columns of the period
 * and the retries, the test users' payment behaviours, the charges and the payment accounts. The
 * business clock's offset is the `meta` row `clock_offset_ms`.
 */
export const BILLING_MIGRATION = {
  name: 'billing: periods, retries, payment behaviours, charges, payment accounts',
  sql: `
    ALTER TABLE subscriptions ADD COLUMN anchor_at INTEGER;
    ALTER TABLE subscriptions ADD COLUMN periods INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE subscriptions ADD COLUMN period_end INTEGER;
    ALTER TABLE subscriptions ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE subscriptions ADD COLUMN charges INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE subscriptions ADD COLUMN next_kind TEXT;
    ALTER TABLE plans ADD COLUMN trial_days INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE payment_behaviours (
      app_id TEXT NOT NULL, user_id TEXT NOT NULL, behaviour TEXT NOT NULL, PRIMARY KEY (app_id, user_id)
    ) STRICT;
    CREATE TABLE payments (
      id TEXT PRIMARY KEY, app_id TEXT NOT NULL, user_id TEXT NOT NULL, plan TEXT NOT NULL,
      amount INTEGER NOT NULL, currency TEXT NOT NULL, outcome TEXT NOT NULL, kind TEXT NOT NULL,
      created_at TEXT NOT NULL
    ) STRICT;
    CREATE INDEX payments_by_app_user ON payments (app_id, user_id);
    CREATE TABLE payouts (app_id TEXT PRIMARY KEY, account_id TEXT NOT NULL, linked_at TEXT NOT NULL) STRICT;
    ALTER TABLE deliveries ADD COLUMN simulated TEXT;
  `,
};

/**
 * Gives the subscriptions an earlier sandbox left (no period columns yet) their next transition:
 * an active or trialing one renews at `expires_at`, a cancelled or past-due one expires then. Run at
 * every start; it touches only rows without a next transition kind.
 */
export const CARRY_FORWARD_SQL = `
  UPDATE subscriptions SET
    period_end = CAST(strftime('%s', expires_at) AS INTEGER) * 1000,
    next_transition_at = CAST(strftime('%s', expires_at) AS INTEGER) * 1000,
    next_kind = CASE WHEN status IN ('active', 'trialing') THEN 'renew' ELSE 'expire' END
  WHERE next_kind IS NULL AND expires_at IS NOT NULL AND status != 'expired'
`;
