import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AppHistory } from './history.js';
import { Journal, logPath } from './journal.js';
import type {
  AppRecord,
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
import {
  dropLogsBefore,
  logGenerations,
  readLegacyState,
  readSnapshot,
  removeLegacyState,
  replayLog,
  writeSnapshot,
} from './snapshot.js';

/** The log rolls over into a new snapshot past this size, or past the last snapshot's size if larger. */
const MIN_COMPACT_BYTES = 8 * 1024 * 1024;

const pair = (a: string, b: string): string => `${a}\u0000${b}`;

function pushIndex(index: Map<string, string[]>, key: string, id: string): void {
  const list = index.get(key);
  if (list === undefined) index.set(key, [id]);
  else list.push(id);
}

function dropIndex(index: Map<string, string[]>, key: string, id: string): void {
  const list = index.get(key);
  if (list === undefined) return;
  const at = list.indexOf(id);
  if (at >= 0) list.splice(at, 1);
}

/**
 * All marketplace state, indexed in Maps so that every lookup costs the same whatever the data size.
 * Every change goes through {@link commit}: applied in memory and appended to the log; a handler
 * awaits {@link sync} before it answers, so a 2xx means the change is on disk (docs/DECISIONS.md §2).
 */
export class Store {
  seed: SeedIds = { developer_id: '', app_id: '', test_key_id: '', live_key_id: '', user_ids: [] };
  readonly users = new Map<string, UserRecord>();
  readonly apps = new Map<string, AppRecord>();
  readonly appsByClientId = new Map<string, AppRecord>();
  readonly appIdsByOwner = new Map<string, string[]>();
  readonly plans = new Map<string, PlanRecord>();
  readonly planIdsByApp = new Map<string, string[]>();
  readonly keys = new Map<string, KeyRecord>();
  readonly keysBySecret = new Map<string, KeyRecord>();
  readonly keyIdsByApp = new Map<string, string[]>();
  readonly userIdsByApp = new Map<string, string[]>();
  readonly subscriptions = new Map<string, SubscriptionRecord>();
  readonly subscriberCounts = new Map<string, number>();
  readonly tokens = new Map<string, TokenRecord>();
  readonly histories = new Map<string, AppHistory>();
  readonly pending = new Map<string, PendingDelivery>();
  private journal: Journal | undefined;
  private snapshotBytes = 0;

  private constructor(
    readonly dataDir: string,
    private readonly now: () => number,
  ) {}

  /**
   * Opens the state in `dataDir` (created 0700): the snapshot, then every log after it. Answers
   * `fresh: true` when there was nothing to load.
   */
  static async open(
    dataDir: string,
    now: () => number,
    onError: (error: unknown) => void,
  ): Promise<{ store: Store; fresh: boolean }> {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const store = new Store(dataDir, now);
    const snap = await readSnapshot(dataDir);
    const gens = await logGenerations(dataDir);
    if (snap.changes.length === 0 && gens.length === 0) {
      const legacy = await readLegacyState(dataDir);
      if (legacy !== undefined) {
        // Written at once: the next start reads the snapshot, not the old files.
        snap.changes = legacy;
        await writeSnapshot(dataDir, JSON.stringify(snap));
      }
    }
    for (const change of snap.changes) store.apply(change);
    let gen = snap.gen;
    let offset = 0;
    for (const g of gens) {
      if (g < snap.gen) continue;
      gen = g;
      offset = await replayLog(logPath(dataDir, g), (c) => store.apply(c));
    }
    await dropLogsBefore(dataDir, snap.gen);
    for (const h of store.histories.values()) h.offeredSeq = h.lastSeq;
    store.snapshotBytes = snap.changes.length * 200;
    store.journal = await Journal.open(
      dataDir,
      gen,
      offset,
      () => Math.max(MIN_COMPACT_BYTES, store.snapshotBytes),
      (next) => store.compact(next),
      onError,
    );
    return { store, fresh: store.seed.app_id === '' };
  }

  /** Removes the sandbox's own files from `dataDir` (the folder may hold other things). */
  static async reset(dataDir: string): Promise<void> {
    await rm(join(dataDir, 'snapshot.json'), { force: true });
    await removeLegacyState(dataDir);
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    for (const g of await logGenerations(dataDir)) await rm(logPath(dataDir, g), { force: true });
  }

  /** Applies a change and logs it. */
  commit(change: Change): void {
    this.apply(change);
    this.journal!.append(change);
  }

  /** Resolves when every change so far is on disk (group commit). */
  sync(): Promise<void> {
    return this.journal!.sync();
  }

  /** Writes what is queued and closes the log. */
  close(): Promise<void> {
    return this.journal!.close();
  }

  private compact(gen: number): Promise<void> {
    const changes = this.changes();
    const text = JSON.stringify({ version: 2, gen, changes });
    this.snapshotBytes = text.length;
    return writeSnapshot(this.dataDir, text).then(() => dropLogsBefore(this.dataDir, gen));
  }

  /** The state as the shortest list of changes that rebuilds it (expired and dead tokens left out). */
  private changes(): Change[] {
    const now = this.now();
    const out: Change[] = [{ op: 'seed', v: this.seed }];
    for (const v of this.users.values()) out.push({ op: 'user', v });
    for (const v of this.apps.values()) out.push({ op: 'app', v });
    for (const v of this.plans.values()) out.push({ op: 'plan', v });
    for (const v of this.keys.values()) out.push({ op: 'key', v });
    for (const v of this.subscriptions.values()) out.push({ op: 'sub', v });
    const liveFamilies = new Set<string>();
    for (const t of this.tokens.values()) if (t.kind === 'refresh') liveFamilies.add(t.family);
    for (const v of this.tokens.values()) {
      if (v.kind === 'access' && v.expires_at !== null && v.expires_at <= now) continue;
      if (v.kind === 'spent' && !liveFamilies.has(v.family)) continue;
      out.push({ op: 'token', v });
    }
    for (const h of this.histories.values()) for (const v of h.all()) out.push({ op: 'delivery', v });
    for (const v of this.pending.values()) out.push({ op: 'pending', v });
    return out;
  }

  /** Applies one change to memory (startup replays the log through here). */
  private apply(c: Change): void {
    switch (c.op) {
      case 'seed':
        this.seed = c.v;
        return;
      case 'user':
        if (!this.users.has(c.v.id) && c.v.app_id !== null) pushIndex(this.userIdsByApp, c.v.app_id, c.v.id);
        this.users.set(c.v.id, c.v);
        return;
      case 'app': {
        const old = this.apps.get(c.v.id);
        if (old) this.appsByClientId.delete(old.client_id);
        else pushIndex(this.appIdsByOwner, c.v.owner_id, c.v.id);
        this.apps.set(c.v.id, c.v);
        this.appsByClientId.set(c.v.client_id, c.v);
        return;
      }
      case 'app-':
        return this.removeApp(c.id);
      case 'plan':
        if (!this.plans.has(pair(c.v.app_id, c.v.id))) pushIndex(this.planIdsByApp, c.v.app_id, c.v.id);
        this.plans.set(pair(c.v.app_id, c.v.id), c.v);
        return;
      case 'plan-':
        this.plans.delete(pair(c.app_id, c.id));
        dropIndex(this.planIdsByApp, c.app_id, c.id);
        return;
      case 'key':
        if (!this.keys.has(c.v.id)) pushIndex(this.keyIdsByApp, c.v.app_id, c.v.id);
        this.keys.set(c.v.id, c.v);
        this.keysBySecret.set(c.v.key, c.v);
        return;
      case 'key-': {
        const key = this.keys.get(c.id);
        if (!key) return;
        this.keys.delete(key.id);
        this.keysBySecret.delete(key.key);
        dropIndex(this.keyIdsByApp, key.app_id, key.id);
        return;
      }
      case 'sub':
        return this.putSubscription(c.v);
      case 'token':
        this.tokens.set(c.v.token, c.v);
        return;
      case 'token-':
        this.tokens.delete(c.token);
        return;
      case 'delivery':
        return this.history(c.v.app_id).push(c.v);
      case 'pending':
        this.pending.set(c.v.delivery.id, c.v);
        return;
      case 'pending-':
        this.pending.delete(c.id);
        return;
    }
  }

  private removeApp(id: string): void {
    const app = this.apps.get(id);
    if (!app) return;
    this.apps.delete(app.id);
    this.appsByClientId.delete(app.client_id);
    dropIndex(this.appIdsByOwner, app.owner_id, app.id);
    for (const planId of this.planIdsByApp.get(app.id) ?? []) {
      this.plans.delete(pair(app.id, planId));
      this.subscriberCounts.delete(pair(app.id, planId));
    }
    this.planIdsByApp.delete(app.id);
    for (const keyId of this.keyIdsByApp.get(app.id) ?? []) {
      const key = this.keys.get(keyId);
      if (key) this.keysBySecret.delete(key.key);
      this.keys.delete(keyId);
    }
    this.keyIdsByApp.delete(app.id);
    for (const userId of this.userIdsByApp.get(app.id) ?? []) {
      this.users.delete(userId);
      this.subscriptions.delete(pair(app.id, userId));
    }
    this.userIdsByApp.delete(app.id);
    this.subscriptions.delete(pair(app.id, app.owner_id));
    for (const [token, record] of this.tokens) if (record.app_id === app.id) this.tokens.delete(token);
    this.histories.delete(app.id);
    for (const [id, p] of this.pending) if (p.delivery.app_id === app.id) this.pending.delete(id);
  }

  /** Adds or replaces a subscription, keeping per-plan subscriber counts right. */
  private putSubscription(sub: SubscriptionRecord): void {
    const key = pair(sub.app_id, sub.user_id);
    const old = this.subscriptions.get(key);
    if (old !== undefined) {
      const oldKey = pair(old.app_id, old.plan);
      this.subscriberCounts.set(oldKey, (this.subscriberCounts.get(oldKey) ?? 1) - 1);
    }
    this.subscriptions.set(key, sub);
    const planKey = pair(sub.app_id, sub.plan);
    this.subscriberCounts.set(planKey, (this.subscriberCounts.get(planKey) ?? 0) + 1);
  }

  /** The delivery history of one app (created empty). */
  history(appId: string): AppHistory {
    let h = this.histories.get(appId);
    if (h === undefined) {
      h = new AppHistory();
      this.histories.set(appId, h);
    }
    return h;
  }

  plan(appId: string, planId: string): PlanRecord | undefined {
    return this.plans.get(pair(appId, planId));
  }

  subscriberCount(appId: string, planId: string): number {
    return this.subscriberCounts.get(pair(appId, planId)) ?? 0;
  }

  subscription(appId: string, userId: string): SubscriptionRecord | undefined {
    return this.subscriptions.get(pair(appId, userId));
  }

  /** A new delivery's sequence number: one above the newest ever given out for the app. */
  nextSeq(appId: string): number {
    return this.history(appId).lastSeq + 1;
  }

  /** Logs a new delivery (it joins the app's history). */
  addDelivery(d: DeliveryRecord): void {
    this.commit({ op: 'delivery', v: d });
  }
}
