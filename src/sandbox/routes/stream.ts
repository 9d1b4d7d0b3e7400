import type { ApiContext, ApiResult } from '../core.js';
import { ownedApp } from '../http/auth.js';
import { invalidRequest } from '../http/errors.js';
import { allowQuery } from '../http/query.js';

/**
 * `GET /apps/{id}/webhooks/stream`: the relay (Server-Sent Events), resuming after `Last-Event-ID`
 * (or the `lastEventId` query parameter EventSource polyfills send); without it, a `position` event
 * and live deliveries, no history (docs/PROTOCOL.md, Relay stream).
 */
export function webhookStream(ctx: ApiContext): ApiResult {
  allowQuery(ctx.url, ['lastEventId']);
  const app = ownedApp(ctx, ctx.params.app_id!);
  const header = ctx.req.headers['last-event-id'] ?? ctx.url.searchParams.get('lastEventId') ?? undefined;
  let lastEventId: number | undefined;
  if (header !== undefined && header !== '') {
    if (typeof header !== 'string' || !/^\d{1,15}$/.test(header.trim())) {
      throw invalidRequest('"Last-Event-ID" must be a delivery sequence number.');
    }
    lastEventId = Number(header.trim());
  }
  const p = ctx.principal;
  const owner = p.kind === 'key' ? { keyId: p.key.id } : { family: p.family };
  void ctx.core.relay.subscribe(ctx.res, { appId: app.id, ...owner }, lastEventId);
  return { streamed: true };
}
