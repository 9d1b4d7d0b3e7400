import type { ApiContext, ApiResult } from '../core.js';
import { ownedApp } from '../http/auth.js';
import { allowQuery } from '../http/query.js';
import { newWebhookSecret } from '../ids.js';
import { emptyBody } from './apps.js';

/** `GET /apps/{id}/webhook-secret`. */
export function getWebhookSecret(ctx: ApiContext): ApiResult {
  allowQuery(ctx.url, []);
  return { status: 200, body: { webhook_secret: ownedApp(ctx, ctx.params.app_id!).webhook_secret } };
}

/**
 * `POST /apps/{id}/webhook-secret`: rotates the signing secret at once; the app's relay streams
 * close, so that listeners reconnect and read the new secret.
 */
export async function rotateWebhookSecret(ctx: ApiContext): Promise<ApiResult> {
  const app = ownedApp(ctx, ctx.params.app_id!);
  await emptyBody(ctx);
  const next = { ...app, webhook_secret: newWebhookSecret() };
  ctx.core.ledger.commit({ op: 'app', v: next });
  ctx.core.relay.close((l) => l.appId === app.id);
  return { status: 200, body: { webhook_secret: next.webhook_secret } };
}
