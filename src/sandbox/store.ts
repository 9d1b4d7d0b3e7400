import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoalescingWriter } from './persist.js';

/** Subscription status values (docs/DECISIONS.md §2). */
export const STATUSES = ['active', 'trialing', 'past_due', 'cancelled', 'expired'] as const;
export type Status = (typeof STATUSES)[number];
/** Plan kinds (docs/DECISIONS.md §2). */
export const PLAN_KINDS = ['free', 'monthly', 'annual', 'one_time'] as const;
export type PlanKind = (typeof PLAN_KINDS)[number];
/** Token scopes (docs/PROTOCOL.md, Identity). */
export const SCOPES = ['identity:read', 'entitlements:read', 'apps:write'] as const;
export type Scope = (typeof SCOPES)[number];

/** A marketplace user: the developer (`app_id: null`) or a simulator test user of one app. */
export interface UserRecord {
  id: string;
  email: string;
  name: string;
  app_id: string | null;
  created_at: string;
}

/** An app as stored, secrets included. */
export interface AppRecord {
  id: string;
  owner_id: string;
  name: string;
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  webhook_url: string | null;
  embed_url: string | null;
  webhook_secret: string;
  created_at: string;
}

/** A pricing plan of one app. */
export interface PlanRecord {
  id: string;
  app_id: string;
  name: string;
  kind: PlanKind;
  price: { amount: number; currency: string } | null;
  features: string[];
  api_call_limit: number | null;
  archived: boolean;
  created_at: string;
}

/** An API key of one app; the secret is stored so the sandbox can show its seed again. */
export interface KeyRecord {
  id: string;
  app_id: string;
  mode: 'test' | 'live';
  key: string;
  created_at: string;
}

/** A user's subscription to one plan of one app. */
export interface SubscriptionRecord {
  user_id: string;
  app_id: string;
  plan: string;
  status: Status;
  expires_at: string | null;
  cancelled_at: string | null;
  api_calls: number;
  created_at: string;
}

/** An access (`at_…`) or refresh (`rt_…`) token; `family` links every rotation of one grant. */
export interface TokenRecord {
  token: string;
  kind: 'access' | 'refresh';
  app_id: string;
  user_id: string;
  scopes: Scope[];
  expires_at: number | null;
  family: string;
}

/** Which records the first start created; they make up the {@link SandboxSeed}. */
export interface SeedIds {
  developer_id: string;
  app_id: string;
  test_key_id: string;
  live_key_id: string;
  user_ids: string[];
}

interface Snapshot {
  version: 1;
  seed: SeedIds;
  users: UserRecord[];
  apps: AppRecord[];
  plans: PlanRecord[];
  keys: KeyRecord[];
  subscriptions: SubscriptionRecord[];
  tokens: TokenRecord[];
}

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
 * All marketplace state, indexed in Maps so every lookup costs the same whatever the data size.
 * Handlers change records through these methods (or change a record and call {@link changed});
 * the snapshot in `state.json` is rewritten atomically, coalesced, off the request path.
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
  private readonly writer: CoalescingWriter;

  constructor(
    readonly dataDir: string,
    private readonly now: () => number,
    onError: (error: unknown) => void,
  ) {
    this.writer = new CoalescingWriter(this.statePath, () => this.serialize(), 50, onError);
  }

  get statePath(): string {
    return join(this.dataDir, 'state.json');
  }

  /** Loads `state.json`; false when there is none yet. */
  load(): boolean {
    if (!existsSync(this.statePath)) return false;
    let snap: Snapshot;
    try {
      snap = JSON.parse(readFileSync(this.statePath, 'utf8')) as Snapshot;
    } catch (error) {
      throw new Error(
        `The sandbox state ${this.statePath} is unreadable (${String(error)}); start with reset.`,
      );
    }
    if (snap.version !== 1)
      throw new Error(`Unsupported sandbox state version in ${this.statePath}; start with reset.`);
    this.seed = snap.seed;
    for (const u of snap.users) this.addUser(u);
    for (const a of snap.apps) this.addApp(a);
    for (const p of snap.plans) this.addPlan(p);
    for (const k of snap.keys) this.addKey(k);
    for (const s of snap.subscriptions) this.putSubscription(s);
    for (const t of snap.tokens) this.tokens.set(t.token, t);
    return true;
  }

  /** Schedules a save of the current state. */
  changed(): void {
    this.writer.markDirty();
  }

  /** Saves now and waits for it. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  private serialize(): string {
    const now = this.now();
    const tokens = [...this.tokens.values()].filter((t) => t.expires_at === null || t.expires_at > now);
    const snap: Snapshot = {
      version: 1,
      seed: this.seed,
      users: [...this.users.values()],
      apps: [...this.apps.values()],
      plans: [...this.plans.values()],
      keys: [...this.keys.values()],
      subscriptions: [...this.subscriptions.values()],
      tokens,
    };
    return JSON.stringify(snap);
  }

  addUser(user: UserRecord): void {
    this.users.set(user.id, user);
    if (user.app_id !== null) pushIndex(this.userIdsByApp, user.app_id, user.id);
    this.changed();
  }

  addApp(app: AppRecord): void {
    this.apps.set(app.id, app);
    this.appsByClientId.set(app.client_id, app);
    pushIndex(this.appIdsByOwner, app.owner_id, app.id);
    this.changed();
  }

  /** Removes an app with its plans, keys, test users, subscriptions and tokens. */
  deleteApp(app: AppRecord): void {
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
    this.changed();
  }

  /** Points the client-id index at a new client id after a change. */
  reindexClientId(oldClientId: string, app: AppRecord): void {
    this.appsByClientId.delete(oldClientId);
    this.appsByClientId.set(app.client_id, app);
    this.changed();
  }

  plan(appId: string, planId: string): PlanRecord | undefined {
    return this.plans.get(pair(appId, planId));
  }

  addPlan(plan: PlanRecord): void {
    this.plans.set(pair(plan.app_id, plan.id), plan);
    pushIndex(this.planIdsByApp, plan.app_id, plan.id);
    this.changed();
  }

  deletePlan(plan: PlanRecord): void {
    this.plans.delete(pair(plan.app_id, plan.id));
    dropIndex(this.planIdsByApp, plan.app_id, plan.id);
    this.changed();
  }

  subscriberCount(appId: string, planId: string): number {
    return this.subscriberCounts.get(pair(appId, planId)) ?? 0;
  }

  addKey(key: KeyRecord): void {
    this.keys.set(key.id, key);
    this.keysBySecret.set(key.key, key);
    pushIndex(this.keyIdsByApp, key.app_id, key.id);
    this.changed();
  }

  deleteKey(key: KeyRecord): void {
    this.keys.delete(key.id);
    this.keysBySecret.delete(key.key);
    dropIndex(this.keyIdsByApp, key.app_id, key.id);
    this.changed();
  }

  subscription(appId: string, userId: string): SubscriptionRecord | undefined {
    return this.subscriptions.get(pair(appId, userId));
  }

  /** Adds or replaces a subscription, keeping per-plan subscriber counts right. */
  putSubscription(sub: SubscriptionRecord): void {
    const key = pair(sub.app_id, sub.user_id);
    const old = this.subscriptions.get(key);
    if (old !== undefined) {
      const oldKey = pair(old.app_id, old.plan);
      this.subscriberCounts.set(oldKey, (this.subscriberCounts.get(oldKey) ?? 1) - 1);
    }
    this.subscriptions.set(key, sub);
    const planKey = pair(sub.app_id, sub.plan);
    this.subscriberCounts.set(planKey, (this.subscriberCounts.get(planKey) ?? 0) + 1);
    this.changed();
  }

  addToken(token: TokenRecord): void {
    this.tokens.set(token.token, token);
    this.changed();
  }

  deleteToken(token: string): void {
    this.tokens.delete(token);
    this.changed();
  }
}
