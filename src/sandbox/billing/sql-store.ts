import type { SQLInputValue, StatementSync } from 'node:sqlite';
import { isoStamp } from '../kernel/ids.js';
import type { OffsetStore } from './clock.js';
import type { RowCache } from '../kernel/storage/row-cache.js';
import { CARRY_FORWARD_SQL } from '../kernel/storage/billing-schema.js';
import type {
  BillingPlan,
  BillingStore,
  DueKind,
  Kind,
  Payment,
  PaymentBehaviour,
  SubStatus,
  Subscription,
} from './records.js';

type Row = Record<string, SQLInputValue>;

/** The fields of a subscription in its row's column order. */
const SUB_FIELDS: ReadonlyArray<keyof Subscription> = [
  'app_id',
  'user_id',
  'plan',
  'status',
  'expires_at',
  'cancelled_at',
  'api_calls',
  'created_at',
  'next_at',
  'anchor_at',
  'periods',
  'period_end',
  'failures',
  'charges',
  'next_kind',
];
/** The row's columns (`next_at` is `next_transition_at`). */
const SUB_COLUMNS = SUB_FIELDS.map((f) => (f === 'next_at' ? 'next_transition_at' : f));
const UPSERT_SUB =
  `INSERT INTO subscriptions (${SUB_COLUMNS.join(', ')}) VALUES (${SUB_COLUMNS.map(() => '?').join(', ')}) ` +
  `ON CONFLICT (app_id, user_id) DO UPDATE SET ${SUB_COLUMNS.slice(2)
    .map((c) => `${c} = excluded.${c}`)
    .join(', ')}`;

const iso = (ms: number | null): string | null => (ms === null ? null : isoStamp(ms));
const ms = (text: SQLInputValue | undefined): number | null =>
  text === null || text === undefined ? null : Date.parse(String(text));
const num = (v: SQLInputValue | undefined): number | null =>
  v === null || v === undefined ? null : Number(v);

/** Column `i`'s value for the row (times as ISO 8601 text where the table keeps text). */
function subValue(s: Subscription, i: number): SQLInputValue {
  const v = s[SUB_FIELDS[i]!];
  return ISO_FIELDS.has(i) ? iso(v as number | null) : (v as SQLInputValue);
}
const ISO_FIELDS = new Set(
  ['expires_at', 'cancelled_at', 'created_at'].map((f) => SUB_FIELDS.indexOf(f as keyof Subscription)),
);

/** The row's values in column order. */
const subValues = (s: Subscription): SQLInputValue[] => SUB_FIELDS.map((_, i) => subValue(s, i));

function subFromRow(r: Row): Subscription {
  return {
    app_id: String(r.app_id),
    user_id: String(r.user_id),
    plan: String(r.plan),
    status: String(r.status) as SubStatus,
    expires_at: ms(r.expires_at),
    cancelled_at: ms(r.cancelled_at),
    api_calls: Number(r.api_calls),
    created_at: ms(r.created_at) ?? 0,
    next_at: num(r.next_transition_at),
    anchor_at: num(r.anchor_at),
    periods: Number(r.periods ?? 0),
    period_end: num(r.period_end),
    failures: Number(r.failures ?? 0),
    charges: Number(r.charges ?? 0),
    next_kind: (r.next_kind ?? null) as DueKind | null,
  };
}

/**
 * The billing store on the sandbox's SQLite database. Reads are plain queries; every write goes
 * through `execute` (the ledger's, which joins the open group's transaction), so billing's changes
 * commit or roll back with the request that made them.
 */
export class SqlBillingStore implements BillingStore, OffsetStore {
  /** The UPDATE of each set of changed columns (a bit per index in SUB_COLUMNS). */
  private readonly updates = new Map<number, { text: string; fields: number[] }>();

  constructor(
    /** The ledger's statements, cache and writes (so that billing reads what the ledger's reads see). */
    private readonly ledger: {
      sql(text: string): StatementSync;
      readonly cache: RowCache;
      execute(text: string, ...params: SQLInputValue[]): void;
    },
  ) {}

  private sql(text: string): StatementSync {
    return this.ledger.sql(text);
  }

  private get cache(): RowCache {
    return this.ledger.cache;
  }

  private one(text: string, ...params: SQLInputValue[]): Row | undefined {
    return this.sql(text).get(...params) as Row | undefined;
  }

  private run(text: string, ...params: SQLInputValue[]): void {
    this.ledger.execute(text, ...params);
  }

  /** Gives subscriptions from an earlier sandbox their next transition (see CARRY_FORWARD_SQL). */
  carryForward(): void {
    this.run(CARRY_FORWARD_SQL);
    this.cache.clear();
  }

  /** Kept in the row cache, so that a rolled-back advance (a full disk) leaves the clock where it was. */
  clockOffset(): number {
    return this.cache.read('meta', '', 'clock_offset_ms', () => {
      const row = this.one(`SELECT value FROM meta WHERE key = 'clock_offset_ms'`);
      return row ? Number(row.value) : 0;
    });
  }

  setClockOffset(value: number): void {
    this.run(`INSERT OR REPLACE INTO meta (key, value) VALUES ('clock_offset_ms', ?)`, String(value));
    this.cache.put('meta', '', 'clock_offset_ms', value);
  }

  plan(appId: string, planId: string): BillingPlan | undefined {
    return this.cache.read('plan', appId, planId, () => {
      const r = this.one('SELECT * FROM plans WHERE app_id = ? AND id = ?', appId, planId);
      if (!r) return undefined;
      return Object.freeze({
        id: String(r.id),
        app_id: String(r.app_id),
        kind: String(r.kind) as Kind,
        price: r.price === null ? null : (JSON.parse(String(r.price)) as BillingPlan['price']),
        features: Object.freeze(JSON.parse(String(r.features))) as string[],
        api_call_limit: num(r.api_call_limit),
        archived: Boolean(r.archived),
        trial_days: Number(r.trial_days ?? 0),
      });
    });
  }

  /** A copy of the subscription (callers may change theirs). */
  subscription(appId: string, userId: string): Subscription | undefined {
    const sub = this.cache.read('sub', appId, userId, () => {
      const r = this.one('SELECT * FROM subscriptions WHERE app_id = ? AND user_id = ?', appId, userId);
      return r && subFromRow(r);
    });
    return sub && { ...sub };
  }

  /** Writes the subscription: the columns that changed when the row is known, else all of them. */
  putSubscription(s: Subscription): void {
    const before = this.cache.peek<Subscription>('sub', s.app_id, s.user_id);
    if (before === undefined) this.run(UPSERT_SUB, ...subValues(s));
    else {
      let changed = 0; // a bit per column, by its index in SUB_FIELDS
      for (let i = 2; i < SUB_FIELDS.length; i++)
        if (s[SUB_FIELDS[i]!] !== before[SUB_FIELDS[i]!]) changed |= 1 << i;
      if (changed !== 0) {
        const { text, fields } = this.update(changed);
        const values = fields.map((i) => subValue(s, i));
        this.run(text, ...values, s.app_id, s.user_id);
      }
    }
    // Kept as given: a subscription is never changed in place (every change is a new object).
    this.cache.put('sub', s.app_id, s.user_id, s);
  }

  /** The UPDATE of the columns whose bits are set in `changed`, and their indexes. */
  private update(changed: number): { text: string; fields: number[] } {
    let u = this.updates.get(changed);
    if (u === undefined) {
      const fields = SUB_FIELDS.flatMap((_, i) => ((changed >> i) & 1 ? [i] : []));
      const text = `UPDATE subscriptions SET ${fields.map((i) => `${SUB_COLUMNS[i]} = ?`).join(', ')} WHERE app_id = ? AND user_id = ?`;
      this.updates.set(changed, (u = { text, fields }));
    }
    return u;
  }

  /**
   * The partial index on next_transition_at answers this in O(log n + limit); ties go by creation
   * (rowid, given as `order`). The rows are taken from the cache when it holds them all (a long
   * advance reads each subscription again and again), else read whole.
   */
  dueBatch(until: number, limit: number): Subscription[] {
    const due = this.sql(
      'SELECT rowid AS row_order, app_id, user_id FROM subscriptions WHERE next_transition_at IS NOT NULL AND next_transition_at <= ? ORDER BY next_transition_at LIMIT ?',
    ).all(until, limit) as Row[];
    const cached: Subscription[] = [];
    for (const r of due) {
      const sub = this.cache.peek<Subscription>('sub', String(r.app_id), String(r.user_id));
      if (sub === undefined) break;
      const order = Number(r.row_order);
      cached.push(sub.order === order ? sub : { ...sub, order });
    }
    if (cached.length === due.length) return cached;
    const rows = this.sql(
      'SELECT rowid AS row_order, * FROM subscriptions WHERE next_transition_at IS NOT NULL AND next_transition_at <= ? ORDER BY next_transition_at LIMIT ?',
    ).all(until, limit) as Row[];
    return rows.map((r) => {
      const sub = { ...subFromRow(r), order: Number(r.row_order) };
      this.cache.put('sub', sub.app_id, sub.user_id, sub);
      return { ...sub };
    });
  }

  /** Counts one API request made with the user's token in the current period (if they have a subscription). */
  countCall(appId: string, userId: string): void {
    const sub = this.subscription(appId, userId);
    if (sub === undefined) return;
    this.run(
      'UPDATE subscriptions SET api_calls = api_calls + 1 WHERE app_id = ? AND user_id = ?',
      appId,
      userId,
    );
    this.cache.put('sub', appId, userId, { ...sub, api_calls: sub.api_calls + 1 });
  }

  paymentBehaviour(appId: string, userId: string): PaymentBehaviour {
    return this.cache.read('behaviour', appId, userId, () => {
      const r = this.one(
        'SELECT behaviour FROM payment_behaviours WHERE app_id = ? AND user_id = ?',
        appId,
        userId,
      );
      return (r?.behaviour as PaymentBehaviour | undefined) ?? 'succeeds';
    });
  }

  setPaymentBehaviour(appId: string, userId: string, behaviour: PaymentBehaviour): void {
    this.run(
      'INSERT OR REPLACE INTO payment_behaviours (app_id, user_id, behaviour) VALUES (?, ?, ?)',
      appId,
      userId,
      behaviour,
    );
    this.cache.put('behaviour', appId, userId, behaviour);
  }

  addPayment(p: Payment): void {
    this.run(
      'INSERT INTO payments (id, app_id, user_id, plan, amount, currency, outcome, kind, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      p.id,
      p.app_id,
      p.user_id,
      p.plan,
      p.amount,
      p.currency,
      p.outcome,
      p.kind,
      p.created_at,
    );
  }

  /** Charges of an app (one user's when given), oldest first, from `after` (a rowid cursor), at most `limit`. */
  payments(
    appId: string,
    input: { userId?: string; after: number; limit: number },
  ): Array<Payment & { cursor: number }> {
    const rows = (
      input.userId === undefined
        ? this.sql(
            'SELECT rowid AS cursor, * FROM payments WHERE app_id = ? AND rowid > ? ORDER BY rowid LIMIT ?',
          ).all(appId, input.after, input.limit)
        : this.sql(
            'SELECT rowid AS cursor, * FROM payments WHERE app_id = ? AND user_id = ? AND rowid > ? ORDER BY rowid LIMIT ?',
          ).all(appId, input.userId, input.after, input.limit)
    ) as Row[];
    return rows.map((r) => ({
      cursor: Number(r.cursor),
      id: String(r.id),
      app_id: String(r.app_id),
      user_id: String(r.user_id),
      plan: String(r.plan),
      amount: Number(r.amount),
      currency: String(r.currency),
      outcome: String(r.outcome) as Payment['outcome'],
      kind: String(r.kind) as Payment['kind'],
      created_at: String(r.created_at),
    }));
  }

  payoutsAccount(appId: string): string | null {
    return (
      (this.one('SELECT account_id FROM payouts WHERE app_id = ?', appId)?.account_id as
        string | undefined) ?? null
    );
  }

  payouts(appId: string): { account_id: string; linked_at: string } | undefined {
    const r = this.one('SELECT account_id, linked_at FROM payouts WHERE app_id = ?', appId);
    return r && { account_id: String(r.account_id), linked_at: String(r.linked_at) };
  }

  linkPayouts(appId: string, accountId: string, at: string): void {
    this.run(
      'INSERT OR IGNORE INTO payouts (app_id, account_id, linked_at) VALUES (?, ?, ?)',
      appId,
      accountId,
      at,
    );
  }

  /** The app's oldest test user with a live subscription to a renewing plan (one that can be cancelled). */
  firstCancellable(appId: string): string | undefined {
    const r = this.one(
      `SELECT s.user_id FROM subscriptions s JOIN plans p ON p.app_id = s.app_id AND p.id = s.plan
       JOIN users u ON u.id = s.user_id AND u.app_id = s.app_id
       WHERE s.app_id = ? AND s.status IN ('active', 'trialing', 'past_due') AND p.kind IN ('monthly', 'annual')
       ORDER BY u.rowid LIMIT 1`,
      appId,
    );
    return r === undefined ? undefined : String(r.user_id);
  }

  /** Every token of a user for an app (access, refresh and spent ones), for a revocation. */
  userTokens(
    appId: string,
    userId: string,
  ): Array<{ token: string; kind: string; family: string; scopes: string[] }> {
    const rows = this.sql(
      'SELECT token, kind, family, scopes FROM tokens WHERE app_id = ? AND user_id = ?',
    ).all(appId, userId) as Row[];
    return rows.map((r) => ({
      token: String(r.token),
      kind: String(r.kind),
      family: String(r.family),
      scopes: JSON.parse(String(r.scopes)) as string[],
    }));
  }
}
