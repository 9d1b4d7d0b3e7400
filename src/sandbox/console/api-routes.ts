import type { ApiContext, ApiResult } from '../core.js';
import { ownedApp, requireScope } from '../http/auth.js';
import { SandboxApiError } from '../http/errors.js';
import {
  getDelivery,
  listDeliveries,
  listRequests,
  RecordsQueryError,
  streamRequests,
} from './records-api.js';

/** Runs a records query, turning its refusals into API errors. */
function answer(work: () => unknown, status = 200): ApiResult {
  try {
    return { status, body: work() };
  } catch (error) {
    if (error instanceof RecordsQueryError)
      throw new SandboxApiError(error.status, error.code, error.message);
    throw error;
  }
}

/**
 * `POST /console/sessions`: a one-time console link for the developer, asked with one of their app's
 * keys (the console then shows that app) or their own sign-in with `apps:write`.
 */
export async function createConsoleSession(ctx: ApiContext): Promise<ApiResult> {
  const p = ctx.principal;
  if (p.kind === 'token') requireScope(p, 'apps:write');
  // A token with apps:write is the developer's own (the simulator never issues that scope).
  const developer = p.kind === 'key' ? ctx.core.ledger.user(p.app.owner_id) : p.user;
  if (!developer) throw new SandboxApiError(404, 'not_found', 'The developer of this app is gone.');
  const link = await ctx.core.console.link({
    developerId: developer.id,
    appId: p.app.id,
    keyId: p.kind === 'key' ? p.key.id : undefined,
    label:
      p.kind === 'key'
        ? `${developer.name} · ${p.app.name} (key ${p.key.id})`
        : `${developer.name} <${developer.email}>`,
  });
  return { status: 201, body: link };
}

/** `GET /apps/{id}/logs`. */
export function listAppRequests(ctx: ApiContext): ApiResult {
  const app = ownedApp(ctx, ctx.params.app_id!);
  return answer(() => listRequests(ctx.core.console.requestLog, app.id, ctx.url.searchParams));
}

/** `GET /apps/{id}/logs/stream`: Server-Sent Events, resuming after `Last-Event-ID`. */
export function streamAppRequests(ctx: ApiContext): ApiResult {
  const app = ownedApp(ctx, ctx.params.app_id!);
  const last = ctx.req.headers['last-event-id'];
  const { res } = ctx;
  let stop: (() => void) | undefined;
  // The head goes out with the first write, once the query was accepted.
  const write = (text: string) => {
    if (!res.headersSent)
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
    res.write(text);
  };
  answer(() => {
    stop = streamRequests(
      ctx.core.console.requestLog,
      app.id,
      ctx.url.searchParams,
      typeof last === 'string' ? last : undefined,
      write,
    );
  });
  res.on('close', () => stop?.());
  return { streamed: true };
}

/** `GET /apps/{id}/deliveries`. */
export function listAppDeliveries(ctx: ApiContext): ApiResult {
  const app = ownedApp(ctx, ctx.params.app_id!);
  return answer(() => listDeliveries(ctx.core.console.deliveries, app.id, ctx.url.searchParams));
}

/** `GET /apps/{id}/deliveries/{dlv}`. */
export function getAppDelivery(ctx: ApiContext): ApiResult {
  const app = ownedApp(ctx, ctx.params.app_id!);
  return answer(() => getDelivery(ctx.core.console.deliveries, app.id, ctx.params.delivery_id!));
}

/** `POST /apps/{id}/deliveries/{dlv}/resend`: one attempt now; answers the delivery with it. */
export async function resendAppDelivery(ctx: ApiContext): Promise<ApiResult> {
  const app = ownedApp(ctx, ctx.params.app_id!);
  const records = ctx.core.console.deliveries;
  answer(() => getDelivery(records, app.id, ctx.params.delivery_id!));
  const url = app.webhook_url;
  if (url === null) {
    throw new SandboxApiError(
      409,
      'no_webhook_url',
      `App ${app.id} has no webhook URL to send to; set one with: mkt apps update --app ${app.id} --webhook-url URL`,
    );
  }
  const record = records.record(app.id, ctx.params.delivery_id!)!;
  await ctx.core.deliveries.resend({ ...app, webhook_url: url }, record);
  return answer(() => getDelivery(records, app.id, ctx.params.delivery_id!));
}
