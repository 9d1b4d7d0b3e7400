import { createMiddleware } from 'hono/factory';
import { routePath } from 'hono/route';
import { isLocalHost } from '../../../wire/local-host.js';
import { RATE_LIMITS } from '../../../wire.js';
import { authenticate } from './auth.js';
import { MAX_REQUEST_BYTES } from './body.js';
import type { SandboxCore } from '../core.js';
import type { RouteContext, SandboxEnv } from './env.js';
import { problemOf, SandboxApiError } from './problem.js';

/**
 * The Host rule (DNS rebinding, docs/DECISIONS.md §2): only a `Host` naming this loopback server
 * is served; anything else gets 421 before routing.
 */
function checkHost(c: RouteContext): void {
  const port = c.get('core').port;
  if (!isLocalHost(c.env.incoming.headers.host, port)) {
    throw new SandboxApiError(
      421,
      'misdirected_request',
      `This local server answers only Host 127.0.0.1:${port}, localhost:${port} or [::1]:${port}.`,
      { connection: 'close' },
      'api',
    );
  }
}

/**
 * A path that is not valid percent-encoding is a 400, not a 404; so is one with a dot segment (`.`,
 * `..`, `%2e%2e`): the URL parser would resolve it into another route (`/avatars/../api/v1/…`).
 */
function checkPath(c: RouteContext): void {
  // The request target as sent (`/path?query`), before any URL parser resolved it.
  const target = c.env.incoming.url ?? '';
  const path = target.startsWith('/') ? target.split('?', 1)[0]! : new URL(c.req.url).pathname;
  if (!path.includes('.') && !path.includes('%')) return;
  let parts: string[];
  try {
    parts = path.split('/').map((part) => (part.includes('%') ? decodeURIComponent(part) : part));
  } catch {
    throw new SandboxApiError(400, 'invalid_request', 'The path is not valid percent-encoding.');
  }
  if (parts.some((part) => part === '.' || part === '..')) {
    throw new SandboxApiError(400, 'invalid_request', 'The path must not have "." or ".." segments.');
  }
}

/** Methods that take no request body (RFC 9110 §9.3: a body on them has no defined meaning). */
const BODILESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

/**
 * A declared body over the limit is a 413 before a byte of it is read (the connection closes after
 * the answer); a body on a method that takes none is a 400.
 */
function checkBody(c: RouteContext): void {
  const headers = c.env.incoming.headers;
  const declared = headers['content-length'];
  const length = declared === undefined ? 0 : Number(declared);
  if (length > MAX_REQUEST_BYTES) {
    throw new SandboxApiError(413, 'payload_too_large', 'The request body is larger than 1 MiB.', {
      connection: 'close',
    });
  }
  if (
    (length > 0 || headers['transfer-encoding'] !== undefined) &&
    BODILESS.has(c.env.incoming.method ?? '')
  ) {
    throw new SandboxApiError(
      400,
      'invalid_request',
      `A ${c.env.incoming.method} request takes no body; send it without one.`,
      { connection: 'close' },
    );
  }
}

// The guards are few middlewares, each doing several checks in order: every layer of middleware
// costs every request a promise and a turn through Hono's dispatch.

/** Before any route: the sandbox core for the routes, then the Host rule and a decodable path. */
export function front(core: SandboxCore) {
  return createMiddleware<SandboxEnv>(async (c, next) => {
    c.set('core', core);
    checkHost(c);
    checkPath(c);
    checkBody(c);
    await next();
  });
}

/**
 * Every API request, in order: authenticated (a Bearer token or an API key) as
 * `c.get('principal')`, or 401; the per-minute limit of the key or the token's grant (wire.ts
 * RATE_LIMITS), its headers on
 * every answer, 429 included; then the answer waits until the request's changes are committed and on
 * disk (docs/DECISIONS.md, durability): a 2xx means committed, and a commit that fails (a full disk)
 * turns it into 507 (a read never waits). Once answered, the request is kept in the request log of its
 * app (status, latency, credential, user, and the error code when it failed).
 */
export const apiGuard = createMiddleware<SandboxEnv>(async (c, next) => {
  const core = c.get('core');
  const principal = authenticate(core, c.env.incoming.headers);
  c.set('principal', principal);
  // Usage (docs/DECISIONS.md §5): every request made with a user's access token counts.
  core.onApiCall(principal);
  const startedAt = core.now();
  let thrown: unknown;
  // A key's own limit; a Bearer token's grant has one of its own (refreshing does not reset it).
  const [bucket, limit] =
    principal.kind === 'key'
      ? [principal.key.key, RATE_LIMITS[principal.key.mode]]
      : [`grant:${principal.family}`, RATE_LIMITS.token];
  try {
    const decision = core.rateLimiter.take(bucket, limit);
    // On the Node response itself, so every answer carries them (errors, streams) without Hono
    // building a Headers object for each response.
    for (const name in decision.headers) c.env.outgoing.setHeader(name, decision.headers[name]!);
    if (!decision.allowed) {
      throw new SandboxApiError(429, 'rate_limited', `Rate limit of ${limit} requests per minute exceeded.`);
    }
    const from = core.ledger.mark();
    await next();
    if (c.req.method !== 'GET') await core.ledger.settled(from);
  } catch (error) {
    thrown = error;
    throw error;
  } finally {
    // A route's error is answered below this middleware (c.error); one thrown here or while waiting
    // for the commit is answered above it.
    const failed = thrown ?? c.error;
    const problem = failed === undefined ? undefined : problemOf(failed);
    core.onAnswered({
      id: String(c.env.outgoing.getHeader('x-request-id') ?? ''),
      startedAt,
      method: c.req.method,
      url: c.env.incoming.url ?? c.req.path,
      route: routePath(c, -1),
      status: problem?.status ?? c.res.status,
      caller: principal,
      errorCode: problem?.code,
    });
  }
});

/** A browser sends `Origin` with every POST; only this sandbox's own pages may submit a form (CSRF). */
export const sameOriginForm = createMiddleware<SandboxEnv>(async (c, next) => {
  const port = c.get('core').port;
  const origin = c.req.header('origin');
  const own = [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`];
  if ((origin !== undefined && !own.includes(origin)) || c.req.header('sec-fetch-site') === 'cross-site') {
    throw new SandboxApiError(
      403,
      'access_denied',
      'The consent form was sent from another site; nothing was issued.',
      {},
      'page',
    );
  }
  await next();
});
