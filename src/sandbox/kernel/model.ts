import type { z } from 'zod';
import type { App, Key, Plan, Profile } from './shapes.js';
import type { SandboxCore } from './core.js';
import { SandboxApiError } from './http/problem.js';
import { isoStamp, randomId } from './ids.js';
import type {
  AppRecord,
  KeyRecord,
  PlanRecord,
  Scope,
  Status,
  SubscriptionRecord,
  UserRecord,
} from './storage/records.js';

/** Access tokens live one hour. */
export const ACCESS_TOKEN_TTL_S = 3600;
const DAY_MS = 86_400_000;

/** The public shape of an app (the client secret is never part of it). */
export function appView(app: AppRecord): z.output<typeof App> {
  return {
    id: app.id,
    name: app.name,
    client_id: app.client_id,
    redirect_uris: app.redirect_uris,
    webhook_url: app.webhook_url,
    embed_url: app.embed_url,
    created_at: app.created_at,
  };
}

/** The public shape of a plan, with its subscriber count. */
export function planView(core: SandboxCore, plan: PlanRecord): z.output<typeof Plan> {
  return { ...plan, subscribers: core.ledger.subscriberCount(plan.app_id, plan.id) };
}

/** The public shape of a key: never the secret, only its last four characters. */
export function keyView(key: KeyRecord): z.output<typeof Key> {
  return { id: key.id, mode: key.mode, last4: key.key.slice(-4), created_at: key.created_at };
}

/** The profile of `GET /whoami`; the avatar is served by this sandbox, so its URL follows the current port. */
export function profileView(core: SandboxCore, user: UserRecord): z.output<typeof Profile> {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    avatar_url: `${core.siteUrl}/avatars/${user.id}.svg`,
  };
}

/** A user may act on an app when it is the app's test user or its developer. */
export function userOfApp(core: SandboxCore, app: AppRecord, userId: string): UserRecord {
  const user = core.ledger.user(userId);
  if (!user || (user.app_id !== app.id && user.id !== app.owner_id)) {
    throw new SandboxApiError(404, 'not_found', `No user "${userId}" on app "${app.id}".`);
  }
  return user;
}

/** The entitlement record of `GET /entitlements` (docs/DECISIONS.md §1). */
export interface EntitlementView {
  user_id: string;
  app_id: string;
  plan: string;
  status: Status;
  features: string[];
  usage: { api_calls: number; limit: number };
  expires_at?: string;
}

/** The user's entitlement on the app, or null (no subscription and no `free` plan). */
export function entitlementFor(core: SandboxCore, app: AppRecord, userId: string): EntitlementView | null {
  const sub = core.ledger.subscription(app.id, userId);
  if (sub === undefined) {
    const free = core.ledger.plan(app.id, 'free');
    if (!free || free.archived) return null;
    return {
      user_id: userId,
      app_id: app.id,
      plan: free.id,
      status: 'active',
      features: free.features,
      usage: { api_calls: 0, limit: free.api_call_limit ?? 0 },
    };
  }
  const plan = core.ledger.plan(app.id, sub.plan);
  const ent: EntitlementView = {
    user_id: userId,
    app_id: app.id,
    plan: sub.plan,
    status: sub.status,
    features: plan?.features ?? [],
    usage: { api_calls: sub.api_calls, limit: plan?.api_call_limit ?? 0 },
  };
  if (sub.expires_at !== null) ent.expires_at = sub.expires_at;
  return ent;
}

/** When a subscription in `status` on `plan` runs out, counted from `now`. */
export function expiryFor(plan: PlanRecord, status: Status, now: number): string | null {
  if (status === 'trialing') return isoStamp(now + 14 * DAY_MS);
  if (plan.kind === 'monthly') return isoStamp(now + 30 * DAY_MS);
  if (plan.kind === 'annual') return isoStamp(now + 365 * DAY_MS);
  return null;
}

/** Creates a test user of `app` subscribed to `plan`; a paid plan emits `subscription.created`. */
export function addTestUser(
  core: SandboxCore,
  app: AppRecord,
  input: { plan: PlanRecord; status: Status; email?: string; name?: string; api_calls?: number },
  emit = true,
): { user: UserRecord; subscription: SubscriptionRecord } {
  const now = core.now();
  const id = randomId('usr', 8);
  const user: UserRecord = {
    id,
    email: input.email ?? `${id}@sandbox.test`,
    name: input.name ?? `Test User ${id.slice(-4)}`, // each one told apart in lists and on pages
    app_id: app.id,
    created_at: isoStamp(now),
  };
  core.ledger.commit({ op: 'user', v: user });
  const subscription: SubscriptionRecord = {
    user_id: id,
    app_id: app.id,
    plan: input.plan.id,
    status: input.status,
    expires_at: expiryFor(input.plan, input.status, now),
    cancelled_at: input.status === 'cancelled' ? isoStamp(now) : null,
    api_calls: input.api_calls ?? 0,
    created_at: isoStamp(now),
  };
  core.ledger.commit({ op: 'sub', v: subscription });
  if (emit && input.plan.kind !== 'free') {
    core.deliveries.emitInBackground(app, 'subscription.created', { user_id: id, plan: input.plan.id });
  }
  return { user, subscription };
}

/** The token response of RFC 6749 section 5.1 plus `scope`. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** Issues an access and a refresh token for `user` on `app`. */
export function issueTokens(
  core: SandboxCore,
  app: AppRecord,
  userId: string,
  scopes: Scope[],
  family = randomId('fam', 8),
): TokenResponse {
  const access = randomId('at', 24);
  const refresh = randomId('rt', 24);
  const base = { app_id: app.id, user_id: userId, scopes, family };
  const expires = core.now() + ACCESS_TOKEN_TTL_S * 1000;
  core.ledger.commit({ op: 'token', v: { ...base, token: access, kind: 'access', expires_at: expires } });
  core.ledger.commit({ op: 'token', v: { ...base, token: refresh, kind: 'refresh', expires_at: null } });
  return {
    access_token: access,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_TTL_S,
    refresh_token: refresh,
    scope: scopes.join(' '),
  };
}

/** Revokes every token of one grant (a spent code or refresh token replayed) and closes its streams. */
export function revokeFamily(core: SandboxCore, family: string): void {
  for (const record of core.ledger.familyTokens(family)) {
    // The spent refresh tokens stay, so that a second replay is recognised too.
    if (record.kind !== 'spent') core.ledger.commit({ op: 'token-', token: record.token });
  }
  // Its streams too: the stream registry hears every removal (src/sandbox/kernel/streams.ts).
}
