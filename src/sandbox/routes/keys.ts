import type { ApiContext, ApiResult } from '../core.js';
import { ownedApp } from '../http/auth.js';
import { readJsonObject } from '../http/body.js';
import { SandboxApiError } from '../http/errors.js';
import { allowQuery, paginate } from '../http/query.js';
import { parseFields, required, str } from '../http/validate.js';
import { isoTime, newApiKey, randomId } from '../ids.js';
import { keyView } from '../model.js';
import type { KeyRecord } from '../storage/records.js';

/** `GET /apps/{id}/keys`. */
export function listKeys(ctx: ApiContext): ApiResult {
  const app = ownedApp(ctx, ctx.params.app_id!);
  const ids = ctx.core.ledger.keyIds(app.id) ?? [];
  const view = (id: string) => {
    const key = ctx.core.ledger.key(id);
    return key && keyView(key);
  };
  return { status: 200, body: paginate(ctx.url, ids, view) };
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
  ctx.core.ledger.commit({ op: 'key', v: key });
  return { status: 201, body: { ...keyView(key), key: key.key } };
}

/** `DELETE /apps/{id}/keys/{key_id}`: the key stops working at once and its relay streams close. */
export function deleteKey(ctx: ApiContext): ApiResult {
  allowQuery(ctx.url, []);
  const app = ownedApp(ctx, ctx.params.app_id!);
  const key = ctx.core.ledger.key(ctx.params.key_id!);
  if (!key || key.app_id !== app.id) {
    throw new SandboxApiError(404, 'not_found', `No key "${ctx.params.key_id}".`);
  }
  ctx.core.ledger.commit({ op: 'key-', id: key.id });
  ctx.core.relay.close((l) => l.keyId === key.id);
  return { status: 204 };
}
