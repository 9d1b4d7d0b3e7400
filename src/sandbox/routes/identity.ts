import type { ApiContext, ApiResult } from '../core.js';
import { requireScope } from '../http/auth.js';
import { invalidRequest, SandboxApiError } from '../http/errors.js';
import { allowQuery } from '../http/query.js';
import { entitlementFor, profileView } from '../model.js';

/** `GET /whoami`: the token's user, or the developer who owns the key's app. */
export function whoami(ctx: ApiContext): ApiResult {
  allowQuery(ctx.url, []);
  const p = ctx.principal;
  requireScope(p, 'identity:read');
  const user = p.kind === 'token' ? p.user : ctx.core.ledger.user(p.app.owner_id);
  if (!user) throw new SandboxApiError(404, 'not_found', 'The owner of this app no longer exists.');
  return { status: 200, body: profileView(ctx.core, user) };
}

/** `GET /entitlements`: a token needs no parameters; an API key names the user with `?user_id=`. */
export function entitlements(ctx: ApiContext): ApiResult {
  allowQuery(ctx.url, ['user_id', 'app_id']);
  const p = ctx.principal;
  requireScope(p, 'entitlements:read');
  const appId = ctx.url.searchParams.get('app_id');
  if (appId !== null && appId !== p.app.id) {
    throw new SandboxApiError(
      403,
      'forbidden',
      `These credentials belong to app "${p.app.id}", not "${appId}".`,
    );
  }
  let userId = ctx.url.searchParams.get('user_id');
  if (p.kind === 'token') {
    if (userId !== null && userId !== p.user.id) {
      throw new SandboxApiError(403, 'forbidden', "A user token can only read its own user's entitlement.");
    }
    userId = p.user.id;
  } else if (userId === null || userId === '') {
    throw invalidRequest('Query parameter "user_id" is required with an API key.');
  }
  if (!/^usr_[A-Za-z0-9]+$/.test(userId))
    throw invalidRequest('Query parameter "user_id" must look like usr_….');
  if (ctx.core.ledger.user(userId) === undefined)
    throw new SandboxApiError(404, 'not_found', `No user "${userId}".`);
  const ent = entitlementFor(ctx.core, p.app, userId);
  if (ent === null) {
    throw new SandboxApiError(404, 'not_found', `User "${userId}" has no entitlement on app "${p.app.id}".`);
  }
  return { status: 200, body: ent };
}
