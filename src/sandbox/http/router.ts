import type { IncomingMessage, ServerResponse } from 'node:http';
import { guardLocalHost } from '../../platform/local-host.js';
import type { ApiContext, ApiResult, SandboxCore } from '../core.js';
import * as consoleApi from '../console/api-routes.js';
import * as apps from '../routes/apps.js';
import * as dashboard from '../routes/dashboard.js';
import { entitlements, whoami } from '../routes/identity.js';
import * as keys from '../routes/keys.js';
import { showConsent, submitConsent } from '../routes/oauth/consent.js';
import { serverMetadata } from '../routes/oauth/metadata.js';
import { tokenEndpoint } from '../routes/oauth/token.js';
import * as plans from '../routes/plans.js';
import * as sim from '../routes/simulator.js';
import { webhookStream } from '../routes/stream.js';
import * as secrets from '../routes/webhook-secret.js';
import { authenticate } from './auth.js';
import { diskFull, SandboxApiError } from './errors.js';
import { isDiskFull } from '../storage/database.js';
import { errorPage } from './html.js';
import { RATE_LIMITS } from '../../wire.js';
import { sendHtml, sendJson } from './send.js';

type ApiHandler = (ctx: ApiContext) => ApiResult | Promise<ApiResult>;
/** A handler that writes its own response (pages, OAuth). */
export type RawHandler = (
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

const routes: Route[] = [];
function api(method: string, path: string, handler: ApiHandler): void {
  routes.push({ method, segments: path.split('/').slice(1), api: handler });
}
function raw(method: string, path: string, handler: RawHandler): void {
  routes.push({ method, segments: path.split('/').slice(1), raw: handler });
}

raw('GET', '/', dashboard.index);
raw('GET', '/.well-known/oauth-authorization-server', serverMetadata);
raw('GET', '/oauth/authorize', showConsent);
raw('POST', '/oauth/authorize', submitConsent);
raw('POST', '/api/oauth/token', tokenEndpoint);
raw('POST', '/api/v1/oauth/token', tokenEndpoint);
raw('GET', '/dashboard/apps/:app_id', dashboard.dashboard);
raw('GET', '/avatars/:file', dashboard.avatar);
api('GET', '/api/v1/whoami', whoami);
api('GET', '/api/v1/entitlements', entitlements);
api('GET', '/api/v1/apps', apps.listApps);
api('POST', '/api/v1/apps', apps.createApp);
api('GET', '/api/v1/apps/:app_id', apps.getApp);
api('PATCH', '/api/v1/apps/:app_id', apps.updateApp);
api('DELETE', '/api/v1/apps/:app_id', apps.deleteApp);
api('POST', '/api/v1/apps/:app_id/client-secret', apps.rotateClientSecret);
api('GET', '/api/v1/apps/:app_id/webhook-secret', secrets.getWebhookSecret);
api('POST', '/api/v1/apps/:app_id/webhook-secret', secrets.rotateWebhookSecret);
api('GET', '/api/v1/apps/:app_id/plans', plans.listPlans);
api('POST', '/api/v1/apps/:app_id/plans', plans.createPlan);
api('GET', '/api/v1/apps/:app_id/plans/:plan_id', plans.getPlan);
api('PATCH', '/api/v1/apps/:app_id/plans/:plan_id', plans.updatePlan);
api('DELETE', '/api/v1/apps/:app_id/plans/:plan_id', plans.deletePlan);
api('GET', '/api/v1/apps/:app_id/keys', keys.listKeys);
api('POST', '/api/v1/apps/:app_id/keys', keys.createKey);
api('DELETE', '/api/v1/apps/:app_id/keys/:key_id', keys.deleteKey);
api('GET', '/api/v1/apps/:app_id/webhooks/stream', webhookStream);
api('POST', '/api/v1/console/sessions', consoleApi.createConsoleSession);
api('GET', '/api/v1/apps/:app_id/logs', consoleApi.listAppRequests);
api('GET', '/api/v1/apps/:app_id/deliveries', consoleApi.listAppDeliveries);
api('GET', '/api/v1/apps/:app_id/deliveries/:delivery_id', consoleApi.getAppDelivery);
api('POST', '/api/v1/apps/:app_id/deliveries/:delivery_id/resend', consoleApi.resendAppDelivery);
api('GET', '/api/v1/apps/:app_id/logs/stream', consoleApi.streamAppRequests);
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

/**
 * Routes one request. A foreign `Host` gets 421 first (DNS rebinding, docs/DECISIONS.md §2); any
 * unexpected exception becomes a JSON 500.
 */
export async function handleRequest(
  core: SandboxCore,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (!guardLocalHost(req, res, core.port)) return;
  if (req.url === '/console' || req.url?.startsWith('/console/') || req.url?.startsWith('/console?'))
    return core.console.handle(req, res);
  const isApi = (req.url ?? '').startsWith('/api/');
  try {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', core.siteUrl);
    } catch {
      throw new SandboxApiError(400, 'invalid_request', 'The request target is not a valid URL.');
    }
    let parts: string[];
    try {
      parts = url.pathname.split('/').slice(1).map(decodeURIComponent);
    } catch {
      throw new SandboxApiError(400, 'invalid_request', 'The path is not valid percent-encoding.');
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
      throw new SandboxApiError(405, 'method_not_allowed', `Use ${allowed.join(' or ')} for this path.`, {
        allow: allowed.join(', '),
      });
    }
    throw new SandboxApiError(404, 'not_found', `Nothing at ${url.pathname}.`);
  } catch (caught) {
    const error = isDiskFull(caught) ? diskFull() : caught;
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (error instanceof SandboxApiError) {
      if (isApi) {
        const body = { error: { code: error.code, message: error.message } };
        return sendJson(res, error.status, body, error.headers);
      }
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
  const startedAt = core.now();
  let errorCode: string | undefined;
  res.once('finish', () =>
    core.console.recordRequest({
      id: String(res.getHeader('x-request-id') ?? ''),
      startedAt,
      method: req.method ?? '',
      url: req.url ?? '',
      status: res.statusCode,
      caller: principal,
      errorCode,
      ownerOf: (id) => core.ledger.app(id)?.owner_id,
    }),
  );
  let rateHeaders: Record<string, string> = {};
  if (principal.kind === 'key') {
    const decision = core.rateLimiter.take(principal.key.key, RATE_LIMITS[principal.key.mode]);
    rateHeaders = decision.headers;
    if (!decision.allowed) {
      throw new SandboxApiError(
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
    // A 2xx means the change is on disk (docs/DECISIONS.md §2, durability).
    await core.ledger.sync();
    sendJson(res, result.status, result.body, { ...rateHeaders, ...result.headers });
  } catch (error) {
    if (error instanceof SandboxApiError) {
      errorCode = error.code;
      throw new SandboxApiError(error.status, error.code, error.message, {
        ...rateHeaders,
        ...error.headers,
      });
    }
    throw error;
  }
}
