import { randomBytes } from 'node:crypto';
import { callerOwnerId, ownedApp } from './auth.js';
import type { ApiContext, ApiResult } from './core.js';
import { ApiError, invalidRequest, readJsonObject } from './http.js';
import { isoTime, randomId } from './ids.js';
import { appView, keyView, planView } from './model.js';
import { allowQuery, paginate } from './query.js';
import { PLAN_KINDS, type AppRecord, type KeyRecord, type PlanRecord } from './store.js';
import {
  arrayOf,
  bool,
  httpUrl,
  int,
  nullable,
  objectOf,
  optional,
  parseFields,
  required,
  str,
} from './validate.js';

/** Generates a client secret (`cs_…`). */
export const newClientSecret = (): string => `cs_${randomBytes(24).toString('base64url')}`;
/** Generates a webhook signing secret (`whsec_…`). */
export const newWebhookSecret = (): string => `whsec_${randomBytes(24).toString('base64url')}`;
/** Generates an API key secret (`test_…` or `live_…`). */
export const newApiKey = (mode: 'test' | 'live'): string =>
  `${mode}_${randomBytes(24).toString('base64url')}`;

const appFields = {
  name: str({ max: 100 }),
  redirect_uris: arrayOf(httpUrl({ httpsOrLoopbackOnly: true }), 20),
  webhook_url: nullable(httpUrl()),
  embed_url: nullable(httpUrl()),
};

/** `GET /apps`: the caller's apps. */
export function listApps(ctx: ApiContext): ApiResult {
  const owner = callerOwnerId(ctx.principal);
  const ids = ctx.core.store.appIdsByOwner.get(owner) ?? [];
  return { status: 200, body: paginate(ctx.url, ids, (id) => mapOpt(ctx.core.store.apps.get(id), appView)) };
}

/** `POST /apps`: creates an app; the answer carries the client secret once. */
export async function createApp(ctx: ApiContext): Promise<ApiResult> {
  allowQuery(ctx.url, []);
  const owner = callerOwnerId(ctx.principal);
  const input = parseFields(await readJsonObject(ctx.req), {
    name: required(appFields.name),
    redirect_uris: optional(appFields.redirect_uris),
    webhook_url: optional(appFields.webhook_url),
    embed_url: optional(appFields.embed_url),
  });
  const app: AppRecord = {
    id: randomId('app', 8),
    owner_id: owner,
    name: input.name,
    client_id: randomId('cid', 12),
    client_secret: newClientSecret(),
    redirect_uris: input.redirect_uris ?? [],
    webhook_url: input.webhook_url ?? null,
    embed_url: input.embed_url ?? null,
    webhook_secret: newWebhookSecret(),
    created_at: isoTime(ctx.core.now()),
  };
  ctx.core.store.addApp(app);
  return { status: 201, body: { ...appView(app), client_secret: app.client_secret } };
}

/** `GET /apps/{id}`. */
export function getApp(ctx: ApiContext): ApiResult {
  allowQuery(ctx.url, []);
  return { status: 200, body: appView(ownedApp(ctx, ctx.params.app_id!)) };
}

/** `PATCH /apps/{id}`: name, redirect URIs, webhook and embed URLs. */
export async function updateApp(ctx: ApiContext): Promise<ApiResult> {
  allowQuery(ctx.url, []);
  const app = ownedApp(ctx, ctx.params.app_id!);
  const input = parseFields(await readJsonObject(ctx.req), {
    name: optional(appFields.name),
    redirect_uris: optional(appFields.redirect_uris),
    webhook_url: optional(appFields.webhook_url),
    embed_url: optional(appFields.embed_url),
  });
  if (Object.keys(input).length === 0) throw invalidRequest('Send at least one field to change.');
  if (input.name !== undefined) app.name = input.name;
  if (input.redirect_uris !== undefined) app.redirect_uris = input.redirect_uris;
  if (input.webhook_url !== undefined) app.webhook_url = input.webhook_url;
  if (input.embed_url !== undefined) app.embed_url = input.embed_url;
  ctx.core.store.changed();
  return { status: 200, body: appView(app) };
}

/** `DELETE /apps/{id}`: the app with its plans, keys, test users and tokens. */
export function deleteApp(ctx: ApiContext): ApiResult {
  allowQuery(ctx.url, []);
  ctx.core.store.deleteApp(ownedApp(ctx, ctx.params.app_id!));
  return { status: 204 };
}

async function emptyBody(ctx: ApiContext): Promise<void> {
  allowQuery(ctx.url, []);
  parseFields(await readJsonObject(ctx.req), {});
}

/** `POST /apps/{id}/client-secret`: rotates the client secret and shows it once. */
export async function rotateClientSecret(ctx: ApiContext): Promise<ApiResult> {
  const app = ownedApp(ctx, ctx.params.app_id!);
  await emptyBody(ctx);
  app.client_secret = newClientSecret();
  ctx.core.store.changed();
  return { status: 200, body: { ...appView(app), client_secret: app.client_secret } };
}

/** `GET /apps/{id}/webhook-secret`. */
export function getWebhookSecret(ctx: ApiContext): ApiResult {
  allowQuery(ctx.url, []);
  return { status: 200, body: { webhook_secret: ownedApp(ctx, ctx.params.app_id!).webhook_secret } };
}

/** `POST /apps/{id}/webhook-secret`: rotates the signing secret. */
export async function rotateWebhookSecret(ctx: ApiContext): Promise<ApiResult> {
  const app = ownedApp(ctx, ctx.params.app_id!);
  await emptyBody(ctx);
  app.webhook_secret = newWebhookSecret();
  ctx.core.store.changed();
  return { status: 200, body: { webhook_secret: app.webhook_secret } };
}

const planFields = {
  name: str({ max: 100 }),
  price: nullable(
    objectOf({
      amount: required(int(0, 100_000_000)),
      currency: required(str({ pattern: /^[A-Z]{3}$/, max: 3 })),
    }),
  ),
  features: arrayOf(str({ max: 64, pattern: /^[a-z0-9][a-z0-9_.:-]*$/ }), 100),
  api_call_limit: nullable(int(0, 1_000_000_000)),
};

function checkPrice(kind: PlanRecord['kind'], price: PlanRecord['price']): void {
  if (kind === 'free' && price !== null && price.amount !== 0) {
    throw invalidRequest('Field "price" must be null or zero for a free plan.');
  }
  if (kind !== 'free' && price === null)
    throw invalidRequest(`Field "price" is required for a ${kind} plan.`);
}

function findPlan(ctx: ApiContext, app: AppRecord): PlanRecord {
  const plan = ctx.core.store.plan(app.id, ctx.params.plan_id!);
  if (!plan) throw new ApiError(404, 'not_found', `No plan "${ctx.params.plan_id}" on app "${app.id}".`);
  return plan;
}

/** `GET /apps/{id}/plans`. */
export function listPlans(ctx: ApiContext): ApiResult {
  const app = ownedApp(ctx, ctx.params.app_id!);
  const ids = ctx.core.store.planIdsByApp.get(app.id) ?? [];
  return {
    status: 200,
    body: paginate(ctx.url, ids, (id) =>
      mapOpt(ctx.core.store.plan(app.id, id), (p) => planView(ctx.core, p)),
    ),
  };
}

/** `POST /apps/{id}/plans`: 409 when the id is taken. */
export async function createPlan(ctx: ApiContext): Promise<ApiResult> {
  allowQuery(ctx.url, []);
  const app = ownedApp(ctx, ctx.params.app_id!);
  const input = parseFields(await readJsonObject(ctx.req), {
    id: required(str({ max: 63, pattern: /^[a-z0-9][a-z0-9-]*$/ })),
    name: required(planFields.name),
    kind: required(str({ oneOf: PLAN_KINDS })),
    price: optional(planFields.price),
    features: optional(planFields.features),
    api_call_limit: optional(planFields.api_call_limit),
  });
  if (ctx.core.store.plan(app.id, input.id)) {
    throw new ApiError(409, 'conflict', `App "${app.id}" already has a plan "${input.id}".`);
  }
  const kind = input.kind as PlanRecord['kind'];
  const price = input.price ?? null;
  checkPrice(kind, price);
  const plan: PlanRecord = {
    id: input.id,
    app_id: app.id,
    name: input.name,
    kind,
    price,
    features: input.features ?? [],
    api_call_limit: input.api_call_limit ?? null,
    archived: false,
    created_at: isoTime(ctx.core.now()),
  };
  ctx.core.store.addPlan(plan);
  return { status: 201, body: planView(ctx.core, plan) };
}

/** `GET /apps/{id}/plans/{plan_id}`. */
export function getPlan(ctx: ApiContext): ApiResult {
  allowQuery(ctx.url, []);
  return { status: 200, body: planView(ctx.core, findPlan(ctx, ownedApp(ctx, ctx.params.app_id!))) };
}

/** `PATCH /apps/{id}/plans/{plan_id}`: everything but `id` and `kind`. */
export async function updatePlan(ctx: ApiContext): Promise<ApiResult> {
  allowQuery(ctx.url, []);
  const plan = findPlan(ctx, ownedApp(ctx, ctx.params.app_id!));
  const body = await readJsonObject(ctx.req);
  if ('kind' in body || 'id' in body) throw invalidRequest('The fields "id" and "kind" cannot be changed.');
  const input = parseFields(body, {
    name: optional(planFields.name),
    price: optional(planFields.price),
    features: optional(planFields.features),
    api_call_limit: optional(planFields.api_call_limit),
    archived: optional(bool),
  });
  if (Object.keys(input).length === 0) throw invalidRequest('Send at least one field to change.');
  if (input.price !== undefined) checkPrice(plan.kind, input.price);
  if (input.name !== undefined) plan.name = input.name;
  if (input.price !== undefined) plan.price = input.price;
  if (input.features !== undefined) plan.features = input.features;
  if (input.api_call_limit !== undefined) plan.api_call_limit = input.api_call_limit;
  if (input.archived !== undefined) plan.archived = input.archived;
  ctx.core.store.changed();
  return { status: 200, body: planView(ctx.core, plan) };
}

/** `DELETE /apps/{id}/plans/{plan_id}`: 204, or 200 with the plan archived when it has subscribers. */
export function deletePlan(ctx: ApiContext): ApiResult {
  allowQuery(ctx.url, []);
  const plan = findPlan(ctx, ownedApp(ctx, ctx.params.app_id!));
  if (ctx.core.store.subscriberCount(plan.app_id, plan.id) > 0) {
    plan.archived = true;
    ctx.core.store.changed();
    return { status: 200, body: planView(ctx.core, plan) };
  }
  ctx.core.store.deletePlan(plan);
  return { status: 204 };
}

/** `GET /apps/{id}/keys`. */
export function listKeys(ctx: ApiContext): ApiResult {
  const app = ownedApp(ctx, ctx.params.app_id!);
  const ids = ctx.core.store.keyIdsByApp.get(app.id) ?? [];
  return { status: 200, body: paginate(ctx.url, ids, (id) => mapOpt(ctx.core.store.keys.get(id), keyView)) };
}

/** `POST /apps/{id}/keys`: the answer carries the secret once. */
export async function createKey(ctx: ApiContext): Promise<ApiResult> {
  allowQuery(ctx.url, []);
  const app = ownedApp(ctx, ctx.params.app_id!);
  const input = parseFields(await readJsonObject(ctx.req), {
    mode: required(str({ oneOf: ['test', 'live'] })),
  });
  const mode = input.mode as KeyRecord['mode'];
  const key: KeyRecord = {
    id: randomId('key', 8),
    app_id: app.id,
    mode,
    key: newApiKey(mode),
    created_at: isoTime(ctx.core.now()),
  };
  ctx.core.store.addKey(key);
  return { status: 201, body: { ...keyView(key), key: key.key } };
}

/** `DELETE /apps/{id}/keys/{key_id}`. */
export function deleteKey(ctx: ApiContext): ApiResult {
  allowQuery(ctx.url, []);
  const app = ownedApp(ctx, ctx.params.app_id!);
  const key = ctx.core.store.keys.get(ctx.params.key_id!);
  if (!key || key.app_id !== app.id) throw new ApiError(404, 'not_found', `No key "${ctx.params.key_id}".`);
  ctx.core.store.deleteKey(key);
  return { status: 204 };
}

/**
 * `GET /apps/{id}/webhooks/stream`: the relay (Server-Sent Events), resuming after `Last-Event-ID`;
 * without it, a `position` event (the newest sequence number) and live deliveries, no history.
 */
export function webhookStream(ctx: ApiContext): ApiResult {
  allowQuery(ctx.url, []);
  const app = ownedApp(ctx, ctx.params.app_id!);
  const header = ctx.req.headers['last-event-id'];
  let lastEventId: number | undefined;
  if (header !== undefined && header !== '') {
    if (typeof header !== 'string' || !/^\d{1,15}$/.test(header.trim())) {
      throw invalidRequest('Header "Last-Event-ID" must be a delivery sequence number.');
    }
    lastEventId = Number(header.trim());
  }
  ctx.core.deliveries.subscribe(app.id, ctx.res, lastEventId);
  return { streamed: true };
}

function mapOpt<T, U>(value: T | undefined, fn: (v: T) => U): U | undefined {
  return value === undefined ? undefined : fn(value);
}
