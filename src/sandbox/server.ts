import { createHmac } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { authenticate } from './auth.js';
import type { ApiContext, ApiResult, SandboxCore } from './core.js';
import { ApiError, sendHtml, sendJson } from './http.js';
import { escapeHtml, dashboardPage, errorPage, indexPage, pickUserPage } from './pages.js';
import { RATE_LIMITS } from './rate-limit.js';
import { showAuthorize, submitAuthorize, tokenEndpoint } from './oauth.js';
import * as apps from './routes-apps.js';
import { entitlements, whoami } from './routes-identity.js';
import * as sim from './routes-simulator.js';

type ApiHandler = (ctx: ApiContext) => ApiResult | Promise<ApiResult>;
type RawHandler = (
  core: SandboxCore,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  params: Record<string, string>,
) => void | Promise<void>;

interface Route {
  method: string;
  segments: string[];
  api?: ApiHandler;
  raw?: RawHandler;
}

/** Embedded-app context tokens live five minutes. */
export const CONTEXT_TOKEN_TTL_S = 300;

const routes: Route[] = [];
function api(method: string, path: string, handler: ApiHandler): void {
  routes.push({ method, segments: path.split('/').slice(1), api: handler });
}
function raw(method: string, path: string, handler: RawHandler): void {
  routes.push({ method, segments: path.split('/').slice(1), raw: handler });
}

raw('GET', '/', (core, _req, res) =>
  sendHtml(res, 200, indexPage(core.siteUrl, core.store.apps.get(core.store.seed.app_id))),
);
raw('GET', '/oauth/authorize', (core, _req, res, url) => showAuthorize(core, url, res));
raw('POST', '/oauth/authorize', (core, req, res) => submitAuthorize(core, req, res));
raw('POST', '/api/oauth/token', (core, req, res) => tokenEndpoint(core, req, res));
raw('POST', '/api/v1/oauth/token', (core, req, res) => tokenEndpoint(core, req, res));
raw('GET', '/dashboard/apps/:app_id', dashboard);
raw('GET', '/avatars/:file', avatar);
api('GET', '/api/v1/whoami', whoami);
api('GET', '/api/v1/entitlements', entitlements);
api('GET', '/api/v1/apps', apps.listApps);
api('POST', '/api/v1/apps', apps.createApp);
api('GET', '/api/v1/apps/:app_id', apps.getApp);
api('PATCH', '/api/v1/apps/:app_id', apps.updateApp);
api('DELETE', '/api/v1/apps/:app_id', apps.deleteApp);
api('POST', '/api/v1/apps/:app_id/client-secret', apps.rotateClientSecret);
api('GET', '/api/v1/apps/:app_id/webhook-secret', apps.getWebhookSecret);
api('POST', '/api/v1/apps/:app_id/webhook-secret', apps.rotateWebhookSecret);
api('GET', '/api/v1/apps/:app_id/plans', apps.listPlans);
api('POST', '/api/v1/apps/:app_id/plans', apps.createPlan);
api('GET', '/api/v1/apps/:app_id/plans/:plan_id', apps.getPlan);
api('PATCH', '/api/v1/apps/:app_id/plans/:plan_id', apps.updatePlan);
api('DELETE', '/api/v1/apps/:app_id/plans/:plan_id', apps.deletePlan);
api('GET', '/api/v1/apps/:app_id/keys', apps.listKeys);
api('POST', '/api/v1/apps/:app_id/keys', apps.createKey);
api('DELETE', '/api/v1/apps/:app_id/keys/:key_id', apps.deleteKey);
api('GET', '/api/v1/apps/:app_id/webhooks/stream', apps.webhookStream);
api('POST', '/api/v1/simulator/users', sim.createSimulatorUser);
api('PATCH', '/api/v1/simulator/users/:user_id', sim.updateSimulatorUser);
api('POST', '/api/v1/simulator/events', sim.simulateEvent);
api('POST', '/api/v1/simulator/authorize', sim.simulateAuthorize);
api('POST', '/api/v1/simulator/entitlement-checks', sim.checkEntitlement);

function match(route: Route, parts: string[]): Record<string, string> | undefined {
  if (route.segments.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const want = route.segments[i]!;
    const got = parts[i]!;
    if (want.startsWith(':')) {
      if (got === '') return undefined;
      params[want.slice(1)] = got;
    } else if (want !== got) return undefined;
  }
  return params;
}

/** Routes one request; any unexpected exception becomes a JSON 500 (tests show no input causes one). */
export async function handleRequest(
  core: SandboxCore,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const isApi = (req.url ?? '').startsWith('/api/');
  try {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', core.siteUrl);
    } catch {
      throw new ApiError(400, 'invalid_request', 'The request target is not a valid URL.');
    }
    let parts: string[];
    try {
      parts = url.pathname.split('/').slice(1).map(decodeURIComponent);
    } catch {
      throw new ApiError(400, 'invalid_request', 'The path is not valid percent-encoding.');
    }
    const allowed: string[] = [];
    for (const route of routes) {
      const params = match(route, parts);
      if (params === undefined) continue;
      if (route.method !== req.method) {
        allowed.push(route.method);
        continue;
      }
      if (route.raw) return await route.raw(core, req, res, url, params);
      return await runApi(core, route.api!, req, res, url, params);
    }
    if (allowed.length > 0) {
      throw new ApiError(405, 'method_not_allowed', `Use ${allowed.join(' or ')} for this path.`, {
        allow: allowed.join(', '),
      });
    }
    throw new ApiError(404, 'not_found', `Nothing at ${url.pathname}.`);
  } catch (error) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (error instanceof ApiError) {
      if (isApi)
        return sendJson(
          res,
          error.status,
          { error: { code: error.code, message: error.message } },
          error.headers,
        );
      return sendHtml(res, error.status, errorPage('Error', error.code, error.message));
    }
    const message = error instanceof Error ? error.message : String(error);
    sendJson(res, 500, {
      error: { code: 'internal_error', message: `Unexpected sandbox error: ${message}` },
    });
  }
}

async function runApi(
  core: SandboxCore,
  handler: ApiHandler,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  params: Record<string, string>,
): Promise<void> {
  const principal = authenticate(core, req);
  let rateHeaders: Record<string, string> = {};
  if (principal.kind === 'key') {
    const decision = core.rateLimiter.take(principal.key.key, RATE_LIMITS[principal.key.mode]);
    rateHeaders = decision.headers;
    if (!decision.allowed) {
      throw new ApiError(
        429,
        'rate_limited',
        `Rate limit of ${RATE_LIMITS[principal.key.mode]} requests per minute exceeded.`,
        rateHeaders,
      );
    }
  }
  try {
    const result = await handler({ core, req, res, url, params, principal });
    if ('streamed' in result) return;
    sendJson(res, result.status, result.body, { ...rateHeaders, ...result.headers });
  } catch (error) {
    if (error instanceof ApiError) {
      throw new ApiError(error.status, error.code, error.message, { ...rateHeaders, ...error.headers });
    }
    throw error;
  }
}

/** A short-lived context token for an embedded app: base64url(JSON payload) "." base64url(HMAC). */
export function signContextToken(secret: string, payload: Record<string, unknown>): string {
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('base64url');
  return `${body}.${mac}`;
}

function dashboard(
  core: SandboxCore,
  _req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  params: Record<string, string>,
): void {
  const app = core.store.apps.get(params.app_id!);
  if (!app) return sendHtml(res, 404, errorPage('Not found', 'not_found', `No app "${params.app_id}".`));
  const userId = url.searchParams.get('user_id');
  if (userId === null || userId === '') {
    const ids = [...(core.store.userIdsByApp.get(app.id) ?? []).slice(0, 50), app.owner_id];
    const users = ids.flatMap((id) => core.store.users.get(id) ?? []);
    return sendHtml(res, 200, pickUserPage(app, users));
  }
  const user = core.store.users.get(userId);
  if (!user || (user.app_id !== app.id && user.id !== app.owner_id)) {
    return sendHtml(res, 404, errorPage('Not found', 'not_found', `No user "${userId}" on ${app.name}.`));
  }
  if (app.embed_url === null) return sendHtml(res, 200, dashboardPage(app, user, null));
  const now = Math.floor(core.now() / 1000);
  const token = signContextToken(app.client_secret, {
    user_id: user.id,
    app_id: app.id,
    iat: now,
    exp: now + CONTEXT_TOKEN_TTL_S,
  });
  const frame = new URL(app.embed_url);
  frame.searchParams.set('user_id', user.id);
  frame.searchParams.set('app_id', app.id);
  frame.searchParams.set('context_token', token);
  sendHtml(res, 200, dashboardPage(app, user, frame.toString()));
}

function avatar(
  core: SandboxCore,
  _req: IncomingMessage,
  res: ServerResponse,
  _url: URL,
  params: Record<string, string>,
): void {
  const id = (params.file ?? '').replace(/\.svg$/, '');
  const user = core.store.users.get(id);
  if (!user) return sendHtml(res, 404, errorPage('Not found', 'not_found', 'No such avatar.'));
  const initial = escapeHtml((user.name.trim()[0] ?? '?').toUpperCase());
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="#5b6ee1"/><text x="32" y="42" font-size="28" text-anchor="middle" fill="#fff" font-family="sans-serif">${initial}</text></svg>`;
  res.writeHead(200, { 'content-type': 'image/svg+xml', 'content-length': String(Buffer.byteLength(svg)) });
  res.end(svg);
}
