import type { SQLInputValue } from 'node:sqlite';
import type {
  AppRecord,
  DeliveryRecord,
  KeyRecord,
  PendingDelivery,
  PlanRecord,
  SubscriptionRecord,
  TokenRecord,
  UserRecord,
} from './records.js';

/** A row as `node:sqlite` answers it. */
export type Row = Record<string, SQLInputValue>;

const text = (v: SQLInputValue | undefined): string => v as string;
const textOrNull = (v: SQLInputValue | undefined): string | null =>
  v === null || v === undefined ? null : (v as string);
const num = (v: SQLInputValue | undefined): number => Number(v);
const numOrNull = (v: SQLInputValue | undefined): number | null =>
  v === null || v === undefined ? null : Number(v);

/**
 * Each record kind as a table: its columns, how a record becomes the row's values, and back. Lists
 * and objects (redirect URIs, features, price, scopes) are JSON text; everything asked about is a column.
 */
export const users = {
  columns: ['id', 'email', 'name', 'app_id', 'created_at'],
  toRow: (u: UserRecord): SQLInputValue[] => [u.id, u.email, u.name, u.app_id, u.created_at],
  fromRow: (r: Row): UserRecord => ({
    id: text(r.id),
    email: text(r.email),
    name: text(r.name),
    app_id: textOrNull(r.app_id),
    created_at: text(r.created_at),
  }),
};

export const apps = {
  columns: [
    'id',
    'owner_id',
    'name',
    'client_id',
    'client_secret',
    'redirect_uris',
    'webhook_url',
    'embed_url',
    'webhook_secret',
    'created_at',
  ],
  toRow: (a: AppRecord): SQLInputValue[] => [
    a.id,
    a.owner_id,
    a.name,
    a.client_id,
    a.client_secret,
    JSON.stringify(a.redirect_uris),
    a.webhook_url,
    a.embed_url,
    a.webhook_secret,
    a.created_at,
  ],
  fromRow: (r: Row): AppRecord => ({
    id: text(r.id),
    owner_id: text(r.owner_id),
    name: text(r.name),
    client_id: text(r.client_id),
    client_secret: text(r.client_secret),
    redirect_uris: JSON.parse(text(r.redirect_uris)) as string[],
    webhook_url: textOrNull(r.webhook_url),
    embed_url: textOrNull(r.embed_url),
    webhook_secret: text(r.webhook_secret),
    created_at: text(r.created_at),
  }),
};

export const plans = {
  columns: [
    'id',
    'app_id',
    'name',
    'kind',
    'price',
    'features',
    'api_call_limit',
    'trial_days',
    'archived',
    'created_at',
  ],
  toRow: (p: PlanRecord): SQLInputValue[] => [
    p.id,
    p.app_id,
    p.name,
    p.kind,
    p.price === null ? null : JSON.stringify(p.price),
    JSON.stringify(p.features),
    p.api_call_limit,
    p.trial_days ?? 0,
    p.archived ? 1 : 0,
    p.created_at,
  ],
  fromRow: (r: Row): PlanRecord => ({
    id: text(r.id),
    app_id: text(r.app_id),
    name: text(r.name),
    kind: text(r.kind) as PlanRecord['kind'],
    price: r.price === null ? null : (JSON.parse(text(r.price)) as PlanRecord['price']),
    features: JSON.parse(text(r.features)) as string[],
    api_call_limit: numOrNull(r.api_call_limit),
    trial_days: num(r.trial_days ?? 0),
    archived: num(r.archived) === 1,
    created_at: text(r.created_at),
  }),
};

export const apiKeys = {
  columns: ['id', 'app_id', 'mode', 'secret', 'created_at'],
  toRow: (k: KeyRecord): SQLInputValue[] => [k.id, k.app_id, k.mode, k.key, k.created_at],
  fromRow: (r: Row): KeyRecord => ({
    id: text(r.id),
    app_id: text(r.app_id),
    mode: text(r.mode) as KeyRecord['mode'],
    key: text(r.secret),
    created_at: text(r.created_at),
  }),
};

export const subscriptions = {
  columns: [
    'user_id',
    'app_id',
    'plan',
    'status',
    'expires_at',
    'cancelled_at',
    'api_calls',
    'created_at',
    'next_transition_at',
  ],
  // The next transition is when the subscription runs out (the lifecycle refines it).
  toRow: (s: SubscriptionRecord): SQLInputValue[] => [
    s.user_id,
    s.app_id,
    s.plan,
    s.status,
    s.expires_at,
    s.cancelled_at,
    s.api_calls,
    s.created_at,
    s.expires_at === null ? null : Date.parse(s.expires_at),
  ],
  fromRow: (r: Row): SubscriptionRecord => ({
    user_id: text(r.user_id),
    app_id: text(r.app_id),
    plan: text(r.plan),
    status: text(r.status) as SubscriptionRecord['status'],
    expires_at: textOrNull(r.expires_at),
    cancelled_at: textOrNull(r.cancelled_at),
    api_calls: num(r.api_calls),
    created_at: text(r.created_at),
  }),
};

export const tokens = {
  columns: ['token', 'kind', 'app_id', 'user_id', 'scopes', 'expires_at', 'family', 'spent_at', 'successor'],
  toRow: (t: TokenRecord): SQLInputValue[] => [
    t.token,
    t.kind,
    t.app_id,
    t.user_id,
    JSON.stringify(t.scopes),
    t.expires_at,
    t.family,
    t.spent_at ?? null,
    t.successor ?? null,
  ],
  fromRow: (r: Row): TokenRecord => ({
    token: text(r.token),
    kind: text(r.kind) as TokenRecord['kind'],
    app_id: text(r.app_id),
    user_id: text(r.user_id),
    scopes: JSON.parse(text(r.scopes)) as TokenRecord['scopes'],
    expires_at: numOrNull(r.expires_at),
    family: text(r.family),
    spent_at: numOrNull(r.spent_at),
    successor: textOrNull(r.successor),
  }),
};

export const deliveries = {
  columns: ['seq', 'id', 'app_id', 'event', 'created_at', 'body', 'signature', 'simulated'],
  toRow: (d: DeliveryRecord): SQLInputValue[] => [
    d.seq,
    d.id,
    d.app_id,
    d.event,
    d.created_at,
    d.body,
    d.signature,
    d.simulated ?? null,
  ],
  fromRow: (r: Row): DeliveryRecord => ({
    seq: num(r.seq),
    id: text(r.id),
    app_id: text(r.app_id),
    event: text(r.event),
    created_at: text(r.created_at),
    body: text(r.body),
    signature: text(r.signature),
    ...(r.simulated === 'synthetic' ? { simulated: 'synthetic' as const } : {}),
  }),
};

/** A pending delivery joins its delivery row. */
export const pendingDeliveries = {
  columns: ['delivery_id', 'app_id', 'url', 'attempt', 'due_at'],
  toRow: (p: PendingDelivery): SQLInputValue[] => [
    p.delivery.id,
    p.delivery.app_id,
    p.url,
    p.attempt,
    p.due_at,
  ],
  fromRow: (r: Row, delivery: DeliveryRecord): PendingDelivery => ({
    delivery,
    url: text(r.url),
    attempt: num(r.attempt),
    due_at: num(r.due_at),
  }),
};

const upserts = new Map<string, string>();

/** `INSERT … ON CONFLICT DO UPDATE` for a table (the row keeps its rowid, so lists keep their order). */
export function upsertSql(table: string, columns: string[], key: string[]): string {
  let text = upserts.get(table);
  if (text === undefined) {
    const set = columns.filter((c) => !key.includes(c)).map((c) => `${c} = excluded.${c}`);
    text =
      `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')}) ` +
      `ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${set.join(', ')}`;
    upserts.set(table, text);
  }
  return text;
}
