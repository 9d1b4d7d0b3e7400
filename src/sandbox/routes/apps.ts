import { developerId, ownedApp } from '../http/auth.js';
import type { ApiContext, ApiResult } from '../core.js';
import { readJsonObject } from '../http/body.js';
import { invalidRequest } from '../http/errors.js';
import { allowQuery, paginate } from '../http/query.js';
import { arrayOf, httpUrl, nullable, optional, parseFields, required, str } from '../http/validate.js';
import { isoTime, newClientSecret, newWebhookSecret, randomId } from '../ids.js';
import { appView } from '../model.js';
import type { AppRecord } from '../storage/records.js';

const appFields = {
  name: str({ max: 100 }),
  redirect_uris: arrayOf(httpUrl({ httpsOrLoopbackOnly: true }), 20),
  webhook_url: nullable(httpUrl()),
  embed_url: nullable(httpUrl()),
};

/** `GET /apps`: with a key, its one app; with a developer token, every app the developer owns. */
export function listApps(ctx: ApiContext): ApiResult {
  const p = ctx.principal;
  const ids = p.kind === 'key' ? [p.app.id] : (ctx.core.ledger.appIds(developerId(p)) ?? []);
  const view = (id: string) => {
    const app = ctx.core.ledger.app(id);
    return app && appView(app);
  };
  return { status: 200, body: paginate(ctx.url, ids, view) };
}

/** `POST /apps`: creates an app for the developer (a key is refused); the answer carries the client secret once. */
export async function createApp(ctx: ApiContext): Promise<ApiResult> {
  allowQuery(ctx.url, []);
  const owner = developerId(ctx.principal);
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
  ctx.core.ledger.commit({ op: 'app', v: app });
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
  const next: AppRecord = { ...app };
  if (input.name !== undefined) next.name = input.name;
  if (input.redirect_uris !== undefined) next.redirect_uris = input.redirect_uris;
  if (input.webhook_url !== undefined) next.webhook_url = input.webhook_url;
  if (input.embed_url !== undefined) next.embed_url = input.embed_url;
  ctx.core.ledger.commit({ op: 'app', v: next });
  return { status: 200, body: appView(next) };
}

/** `DELETE /apps/{id}`: the app with its plans, keys, test users and tokens; its streams close. */
export function deleteApp(ctx: ApiContext): ApiResult {
  allowQuery(ctx.url, []);
  const app = ownedApp(ctx, ctx.params.app_id!);
  ctx.core.ledger.commit({ op: 'app-', id: app.id });
  ctx.core.relay.close((l) => l.appId === app.id);
  return { status: 204 };
}

/** Reads a body that must be empty (or `{}`). */
export async function emptyBody(ctx: ApiContext): Promise<void> {
  allowQuery(ctx.url, []);
  parseFields(await readJsonObject(ctx.req), {});
}

/** `POST /apps/{id}/client-secret`: rotates the client secret and shows it once; the app's streams close. */
export async function rotateClientSecret(ctx: ApiContext): Promise<ApiResult> {
  const app = ownedApp(ctx, ctx.params.app_id!);
  await emptyBody(ctx);
  const next: AppRecord = { ...app, client_secret: newClientSecret() };
  ctx.core.ledger.commit({ op: 'app', v: next });
  ctx.core.relay.close((l) => l.appId === app.id);
  return { status: 200, body: { ...appView(next), client_secret: next.client_secret } };
}
