import { Hono } from 'hono';
import type { SandboxCore } from './kernel/core.js';
import { openApiDocument } from './openapi/document.js';
import { dashboardPages } from './console/dashboard-pages.js';
import { appsApi } from './apps/api.js';
import { identityApi } from './identity/api.js';
import { keysApi } from './keys/api.js';
import { lifeApi } from './simulator/life-api.js';
import { moneyApi } from './billing/money-api.js';
import { payoutsPages } from './billing/payouts-pages.js';
import { consentRoutes } from './oauth/consent.js';
import { deviceRoutes } from './oauth/device.js';
import { metadataRoutes } from './oauth/metadata.js';
import { tokenRoutes } from './oauth/token-grant.js';
import { plansApi } from './plans/api.js';
import { relayApi } from './webhooks/relay-api.js';
import { simulatorApi } from './simulator/authorize-api.js';
import { snapshotApi } from './fixtures/snapshot-api.js';
import { consoleApi } from './console/api-room.js';
import { openApiRoutes } from './openapi/route.js';
import type { SandboxEnv } from './kernel/http/env.js';
import { apiGuard, front } from './kernel/http/guards.js';
import { answerProblem, SandboxApiError } from './kernel/http/problem.js';
import { ConsoleRoom } from './console/room.js';

/**
 * The rooms of the authenticated API, each a Hono router with its routes, schemas and handlers in
 * one file, mounted under `/api/v1`. A new room (billing, console) adds one line here.
 */
const API_ROOMS: ReadonlyArray<Hono<SandboxEnv>> = [
  identityApi,
  appsApi,
  plansApi,
  keysApi,
  relayApi,
  simulatorApi,
  lifeApi,
  moneyApi,
  consoleApi,
  snapshotApi,
];

/** Pages and OAuth endpoints that are not behind API authentication. */
const OPEN_ROUTES: ReadonlyArray<Hono<SandboxEnv>> = [
  dashboardPages,
  metadataRoutes,
  consentRoutes,
  deviceRoutes,
  tokenRoutes,
  payoutsPages,
];

const pattern = (path: string) => new RegExp(`^${path.replace(/:[^/]+/g, '[^/]+').replace(/\*$/, '.*')}$`);

/** The sandbox's HTTP application: the Host rule first, then the open routes, then the API. */
export function sandboxApp(core: SandboxCore): Hono<SandboxEnv> {
  const app = new Hono<SandboxEnv>();
  app.use(front(core));
  // Registered before the API's middleware, so that they answer without API authentication.
  for (const routes of OPEN_ROUTES) app.route('/', routes);
  app.route('/', openApiRoutes(app));
  // The developer console is an application of its own (its sessions, CSRF and pages).
  const console = (c: { req: { raw: Request } }) => core.services.get(ConsoleRoom).app.fetch(c.req.raw);
  app.all('/console', console).all('/console/*', console);
  const api = new Hono<SandboxEnv>();
  api.use(apiGuard);
  for (const room of API_ROOMS) api.route('/', room);
  app.route('/api/v1', api);

  const routes = app.routes
    .filter((r) => r.method !== 'ALL')
    .map((r) => ({ method: r.method, match: pattern(r.path) }));
  app.notFound((c) => {
    const path = c.req.path;
    const allowed = [...new Set(routes.filter((r) => r.match.test(path)).map((r) => r.method))];
    if (allowed.length > 0) {
      throw new SandboxApiError(405, 'method_not_allowed', `Use ${allowed.join(' or ')} for this path.`, {
        allow: allowed.join(', '),
      });
    }
    throw new SandboxApiError(404, 'not_found', `Nothing at ${path}.`);
  });
  app.onError(answerProblem);
  return app;
}

/** The OpenAPI document of the sandbox's application (schema/openapi.json, `GET /api/v1/openapi.json`). */
export function sandboxDocument(siteUrl?: string): Record<string, unknown> {
  return openApiDocument(sandboxApp({} as SandboxCore), siteUrl);
}
