import { Hono } from 'hono';
import { z } from 'zod';
import { ownedApp, requireTestMode } from '../kernel/http/auth.js';
import type { RouteContext, SandboxEnv } from '../kernel/http/env.js';
import { invalidRequest, SandboxApiError } from '../kernel/http/problem.js';
import { createRoute, openapi } from '../kernel/http/declare.js';
import { API_SECURITY, apiJson, writeErrors } from '../kernel/http/responses.js';
import { NO_QUERY, text } from '../kernel/http/schemas.js';
import { Tokens } from '../kernel/shapes.js';
import { issueTokens, userOfApp } from '../kernel/model.js';
import { APP_SCOPES, SCOPES, type AppRecord } from '../kernel/storage/records.js';

const userId = text(64, /^usr_[A-Za-z0-9]+$/);
const appId = text(64, /^app_[A-Za-z0-9]+$/);
const scopeList = z.array(z.enum(SCOPES)).min(1, 'must not be empty').max(SCOPES.length);
/** Checks the caller may use the simulator on app `id` (test mode, its own app). */
function simulatorApp(c: RouteContext, id: string): AppRecord {
  requireTestMode(c.get('principal'));
  return ownedApp({ core: c.get('core'), principal: c.get('principal') }, id);
}

const authorize = createRoute({
  method: 'post',
  path: '/simulator/authorize',
  summary:
    "A token for a test user without a browser; emits user.authorized. Never for the app's owner and never apps:write",
  security: API_SECURITY,
  request: {
    query: NO_QUERY,
    body: {
      required: true,
      content: {
        'application/json': {
          schema: z.strictObject({ app_id: appId, user_id: userId, scopes: scopeList.optional() }),
        },
      },
    },
  },
  responses: {
    201: apiJson(
      'Tokens for the test user',
      Tokens.extend({ user_id: z.string() }).meta({ id: 'TestUserTokens' }),
    ),
    ...writeErrors(403, 404),
  },
});

/**
 * The Integration Simulator's authorizations. Test users, events, the clock and entitlement checks
 * are the marketplace's life: `life-api.ts`.
 */
export const simulatorApi = new Hono<SandboxEnv>();

// A test key must not become a developer token.
openapi(simulatorApi, authorize, (c) => {
  const input = c.get('body');
  const app = simulatorApp(c, input.app_id);
  const scopes = [...new Set(input.scopes ?? APP_SCOPES)];
  if (scopes.length === 0) throw invalidRequest('Field "scopes" must not be empty.');
  const developerOnly = scopes.find((s) => !APP_SCOPES.includes(s));
  if (developerOnly !== undefined) {
    throw new SandboxApiError(
      403,
      'forbidden',
      `The simulator grants test users only ${APP_SCOPES.join(' and ')}, never "${developerOnly}", which is the developer's own.`,
    );
  }
  if (input.user_id === app.owner_id) {
    throw new SandboxApiError(
      403,
      'forbidden',
      "The simulator authorizes test users only, not the app's developer.",
    );
  }
  const user = userOfApp(c.get('core'), app, input.user_id);
  const tokens = issueTokens(c.get('core'), app, user.id, scopes);
  c.get('core').deliveries.emitInBackground(app, 'user.authorized', {
    user_id: user.id,
    app_id: app.id,
    scopes,
  });
  return c.json({ ...tokens, user_id: user.id }, 201);
});
