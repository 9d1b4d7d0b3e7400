import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import type { CredentialGone } from '../streams.js';
import { DeliveryHistory } from './delivery-history.js';
import type {
  AppRecord,
  AttemptRecord,
  Change,
  DeliveryRecord,
  KeyRecord,
  PendingDelivery,
  PlanRecord,
  SeedIds,
  SubscriptionRecord,
  TokenRecord,
  UserRecord,
} from './records.js';
import { applyChange } from './apply-change.js';
import { GroupCommit } from './group-commit.js';
import * as rows from './rows.js';
import type { Row } from './rows.js';
import { KEPT_DELIVERIES } from './apply-change.js';

const NO_SEED: SeedIds = { developer_id: '', app_id: '', test_key_id: '', live_key_id: '', user_ids: [] };

/**
 * All marketplace state, in SQLite: what the rooms read, and every change, written through
 * {@link commit} in the transactions of {@link GroupCommit} (group commit, long transactions).
 */
export class Ledger extends GroupCommit {
  private readonly histories = new Map<string, DeliveryHistory>();
  /** Each app's newest sequence number at open: everything on disk then counts as offered. */
  private readonly seqsAtOpen = new Map<string, number>();

  constructor(
    db: DatabaseSync,
    openReader: () => DatabaseSync,
    lock: DatabaseSync,
    dataDir: string,
    onCommitError: (error: unknown) => void,
  ) {
    super(db, openReader, lock, dataDir, onCommitError);
    for (const r of db.prepare('SELECT app_id, last_seq FROM delivery_seqs').all() as Row[])
      this.seqsAtOpen.set(r.app_id as string, Number(r.last_seq));
  }

  private one(text: string, ...params: SQLInputValue[]): Row | undefined {
    return this.sql(text).get(...params) as Row | undefined;
  }

  private ids(text: string, ...params: SQLInputValue[]): string[] {
    return (this.sql(text).all(...params) as Row[]).map((r) => r.id as string);
  }

  /** Applies a change inside the open group's transaction (opening one if needed). */
  commit(change: Change): void {
    this.inGroup(() => this.write(change));
  }

  /** Applies an earlier version's changes in one transaction (a first start on an old folder). */
  importChanges(changes: Change[]): void {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      for (const change of changes) this.write(change);
      this.db.exec('COMMIT');
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    }
    for (const r of this.db.prepare('SELECT app_id, last_seq FROM delivery_seqs').all() as Row[])
      this.seqsAtOpen.set(r.app_id as string, Number(r.last_seq));
  }

  /** Hears every change that ends a credential (the stream registry closes what it opened). */
  onCredentialGone: (gone: CredentialGone) => void = () => {};

  private write(change: Change): void {
    const gone: CredentialGone | undefined =
      change.op === 'key-'
        ? { keyId: change.id }
        : change.op === 'app-'
          ? { appId: change.id }
          : change.op === 'token-'
            ? { family: this.token(change.token)?.family }
            : undefined;
    applyChange(this, change);
    if (gone !== undefined) this.onCredentialGone(gone);
    // The cache holds only what is unchanged: a written row is forgotten (a key, looked up by its
    // secret, and a removal that reaches into other tables empty it).
    if (change.op === 'plan') {
      this.forgetPlan(change.v.app_id, change.v.id);
      // Kept as a read of the row would give it (a PATCH reads the plan it just wrote).
      const values = rows.plans.toRow(change.v);
      const row = Object.fromEntries(rows.plans.columns.map((c, i) => [c, values[i]!]));
      this.cache.put('planRecord', change.v.app_id, change.v.id, Object.freeze(rows.plans.fromRow(row)));
    } else if (change.op === 'plan-') this.forgetPlan(change.app_id, change.id);
    else if (change.op === 'sub') this.cache.forget('sub', change.v.app_id, change.v.user_id);
    else if (change.op === 'token') this.cache.forget('token', '', change.v.token);
    else if (change.op === 'token-') this.cache.forget('token', '', change.token);
    else if (change.op === 'user') this.cache.forget('user', '', change.v.id);
    else if (change.op === 'app') this.cache.forget('app', '', change.v.id);
    else if (['seed', 'app-', 'key', 'key-'].includes(change.op)) this.cache.clear();
  }

  /** Forgets what the cache holds of a plan (as the routes and as billing read it). */
  forgetPlan(appId: string, planId: string): void {
    this.cache.forget('plan', appId, planId);
    this.cache.forget('planRecord', appId, planId);
  }

  /** Forgets what memory holds of a deleted app. */
  forgetApp(id: string): void {
    this.histories.delete(id);
    this.seqsAtOpen.delete(id);
  }

  /** What the first start seeded (empty ids before that). */
  get seed(): SeedIds {
    const row = this.one(`SELECT value FROM meta WHERE key = 'seed'`);
    return row ? (JSON.parse(row.value as string) as SeedIds) : NO_SEED;
  }

  user(id: string): UserRecord | undefined {
    return this.cache.read('user', '', id, () => {
      const r = this.one(`SELECT * FROM users WHERE id = ?`, id);
      return r && rows.users.fromRow(r);
    });
  }

  /** The test users of an app, oldest first. */
  userIds(appId: string): string[] {
    return this.ids('SELECT id FROM users WHERE app_id = ? ORDER BY rowid', appId);
  }

  app(id: string): AppRecord | undefined {
    return this.cache.read('app', '', id, () => {
      const r = this.one('SELECT * FROM apps WHERE id = ?', id);
      return r && rows.apps.fromRow(r);
    });
  }

  appByClientId(clientId: string): AppRecord | undefined {
    const r = this.one('SELECT * FROM apps WHERE client_id = ?', clientId);
    return r && rows.apps.fromRow(r);
  }

  /** The apps of a developer, oldest first. */
  appIds(ownerId: string): string[] {
    return this.ids('SELECT id FROM apps WHERE owner_id = ? ORDER BY rowid', ownerId);
  }

  plan(appId: string, planId: string): PlanRecord | undefined {
    return this.cache.read('planRecord', appId, planId, () => {
      const r = this.one('SELECT * FROM plans WHERE app_id = ? AND id = ?', appId, planId);
      return r && Object.freeze(rows.plans.fromRow(r));
    });
  }

  /** The plans of an app, oldest first. */
  planIds(appId: string): string[] {
    return this.ids('SELECT id FROM plans WHERE app_id = ? ORDER BY rowid', appId);
  }

  key(id: string): KeyRecord | undefined {
    const r = this.one('SELECT * FROM api_keys WHERE id = ?', id);
    return r && rows.apiKeys.fromRow(r);
  }

  keyBySecret(secret: string): KeyRecord | undefined {
    return this.cache.read('key', '', secret, () => {
      const r = this.one('SELECT * FROM api_keys WHERE secret = ?', secret);
      return r && rows.apiKeys.fromRow(r);
    });
  }

  /** The keys of an app, oldest first. */
  keyIds(appId: string): string[] {
    return this.ids('SELECT id FROM api_keys WHERE app_id = ? ORDER BY rowid', appId);
  }

  subscription(appId: string, userId: string): SubscriptionRecord | undefined {
    const r = this.one('SELECT * FROM subscriptions WHERE app_id = ? AND user_id = ?', appId, userId);
    return r && rows.subscriptions.fromRow(r);
  }

  subscriberCount(appId: string, planId: string): number {
    const r = this.one(
      'SELECT count(*) AS n FROM subscriptions WHERE app_id = ? AND plan = ?',
      appId,
      planId,
    );
    return Number(r?.n ?? 0);
  }

  token(token: string): TokenRecord | undefined {
    return this.cache.read('token', '', token, () => {
      const r = this.one('SELECT * FROM tokens WHERE token = ?', token);
      return r && Object.freeze(rows.tokens.fromRow(r));
    });
  }

  /** Every token of one grant. */
  familyTokens(family: string): TokenRecord[] {
    return (this.sql('SELECT * FROM tokens WHERE family = ?').all(family) as Row[]).map(rows.tokens.fromRow);
  }

  delivery(appId: string, seq: number): DeliveryRecord | undefined {
    const r = this.one('SELECT * FROM deliveries WHERE app_id = ? AND seq = ?', appId, seq);
    return r && rows.deliveries.fromRow(r);
  }

  /** The oldest kept delivery of an app with a sequence number above `seq`. */
  deliveryAfter(appId: string, seq: number): DeliveryRecord | undefined {
    const r = this.one(
      'SELECT * FROM deliveries WHERE app_id = ? AND seq > ? ORDER BY seq LIMIT 1',
      appId,
      Math.max(seq, this.lastSeq(appId) - KEPT_DELIVERIES),
    );
    return r && rows.deliveries.fromRow(r);
  }

  /** The newest sequence number ever given out for the app (never reused, even after a crash). */
  lastSeq(appId: string): number {
    return Number(this.one('SELECT last_seq FROM delivery_seqs WHERE app_id = ?', appId)?.last_seq ?? 0);
  }

  /** A new delivery's sequence number. */
  nextSeq(appId: string): number {
    return this.lastSeq(appId) + 1;
  }

  /** Logs a new delivery (it joins the app's history). */
  addDelivery(d: DeliveryRecord): void {
    this.commit({ op: 'delivery', v: d });
  }

  /** The relay's view of an app's deliveries. */
  history(appId: string): DeliveryHistory {
    let h = this.histories.get(appId);
    if (h === undefined) {
      h = new DeliveryHistory(this, appId, this.seqsAtOpen.get(appId) ?? 0);
      this.histories.set(appId, h);
    }
    return h;
  }

  pending(deliveryId: string): PendingDelivery | undefined {
    const r = this.one('SELECT * FROM pending_deliveries WHERE delivery_id = ?', deliveryId);
    if (!r) return undefined;
    const d = this.one('SELECT * FROM deliveries WHERE id = ?', deliveryId);
    return d && rows.pendingDeliveries.fromRow(r, rows.deliveries.fromRow(d));
  }

  /** Every delivery still owed to a webhook URL, soonest first. */
  allPending(): PendingDelivery[] {
    const list = this.sql(
      'SELECT p.*, d.seq, d.id, d.event, d.created_at, d.body, d.signature, d.simulated FROM pending_deliveries p ' +
        'JOIN deliveries d ON d.id = p.delivery_id ORDER BY p.due_at',
    ).all() as Row[];
    return list.map((r) => rows.pendingDeliveries.fromRow(r, rows.deliveries.fromRow(r)));
  }

  /** Records one webhook attempt (for the console's delivery view). */
  recordAttempt(a: AttemptRecord): void {
    this.commit({ op: 'attempt', v: a });
  }
}
