import { HEADER } from '../../../wire.js';
import type { Principal, SandboxCore } from '../core.js';
import type { RouteContext } from './env.js';
import type { AppRecord, Scope } from '../storage/records.js';
import { SandboxApiError } from './problem.js';

function unauthorized(message: string, challenge = 'Bearer realm="mkt-sandbox"'): SandboxApiError {
  return new SandboxApiError(401, 'unauthorized', message, { 'www-authenticate': challenge });
}

/** RFC 6750 section 3.1: a token that was presented but is not valid. */
function invalidToken(message: string): SandboxApiError {
  const description = message.replace(/["\\]/g, '');
  return unauthorized(
    message,
    `Bearer realm="mkt-sandbox", error="invalid_token", error_description="${description}"`,
  );
}

/** Resolves `Authorization: Bearer at_…` or `X-API-Key: test_…|live_…` to a principal, or throws 401. */
export function authenticate(
  core: SandboxCore,
  headers: { authorization?: string; [name: string]: string | string[] | undefined },
): Principal {
  const authorization = headers.authorization;
  const apiKey = headers[HEADER.apiKey];
  if (authorization !== undefined && apiKey !== undefined) {
    throw unauthorized('Send either Authorization or X-API-Key, not both.');
  }
  if (typeof apiKey === 'string') {
    const key = core.ledger.keyBySecret(apiKey);
    const app = key && core.ledger.app(key.app_id);
    if (!key || !app) throw unauthorized('The API key is not valid.');
    return { kind: 'key', key, app };
  }
  if (authorization !== undefined) {
    const match = /^Bearer +(\S+)$/i.exec(authorization);
    if (!match) throw unauthorized('The Authorization header must be "Bearer <access token>".');
    const record = core.ledger.token(match[1]!);
    if (!record || record.kind !== 'access') throw invalidToken('The access token is not valid.');
    if (record.expires_at !== null && record.expires_at <= core.now()) {
      throw invalidToken('The access token has expired.');
    }
    const user = core.ledger.user(record.user_id);
    const app = core.ledger.app(record.app_id);
    if (!user || !app) throw invalidToken('The access token is not valid.');
    return { kind: 'token', user, app, scopes: record.scopes, family: record.family };
  }
  throw unauthorized('Authenticate with "Authorization: Bearer <token>" or "X-API-Key: <key>".');
}

/** Requires a token scope; API keys pass (they act for their own app). */
export function requireScope(principal: Principal, scope: Scope): void {
  if (principal.kind === 'token' && !principal.scopes.includes(scope)) {
    throw new SandboxApiError(403, 'forbidden', `The token lacks the "${scope}" scope.`);
  }
}

/** The developer whose apps this token manages (a token with `apps:write`); a key is refused. */
export function developerId(principal: Principal): string {
  if (principal.kind === 'key') {
    throw new SandboxApiError(
      403,
      'forbidden',
      'An API key acts for its own app only and cannot create apps.',
    );
  }
  requireScope(principal, 'apps:write');
  return principal.user.id;
}

/**
 * Looks up an app the caller may manage. What the caller may not see is a 404, as if absent, and never
 * names its owner: another developer's app, whether asked with a token or a key. A key asking for
 * another app of its own developer is told which app the key belongs to (403).
 */
export function ownedApp(ctx: { core: SandboxCore; principal: Principal }, appId: string): AppRecord {
  const p = ctx.principal;
  if (p.kind === 'token') requireScope(p, 'apps:write');
  const app = ctx.core.ledger.app(appId);
  const developer = p.kind === 'key' ? p.app.owner_id : p.user.id;
  if (!app || app.owner_id !== developer) {
    throw new SandboxApiError(404, 'not_found', `No app with id "${appId}".`);
  }
  if (p.kind === 'key' && p.app.id !== app.id) {
    throw new SandboxApiError(
      403,
      'forbidden',
      `This API key belongs to another app (${p.app.id}), not to ${app.id}.`,
    );
  }
  return app;
}

/** The simulator is for test mode only: a live key is refused. */
export function requireTestMode(principal: Principal): void {
  if (principal.kind === 'key' && principal.key.mode === 'live') {
    throw new SandboxApiError(
      403,
      'forbidden',
      'The simulator accepts test keys and tokens only, not live keys.',
    );
  }
}

/** The app named by the route's `:app_id`, which the caller may manage (404 or 403 otherwise). */
export function routeApp(c: RouteContext): AppRecord {
  return ownedApp({ core: c.get('core'), principal: c.get('principal') }, c.req.param('app_id')!);
}
