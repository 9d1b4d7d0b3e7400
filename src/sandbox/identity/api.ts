import { Hono } from 'hono';
import { z } from 'zod';
import { requireScope } from '../kernel/http/auth.js';
import { createRoute, openapi } from '../kernel/http/declare.js';
import type { SandboxEnv } from '../kernel/http/env.js';
import { invalidRequest, SandboxApiError } from '../kernel/http/problem.js';
import { API_SECURITY, apiErrors, apiJson } from '../kernel/http/responses.js';
import { NO_QUERY } from '../kernel/http/schemas.js';
import { profileView } from '../kernel/model.js';
import { Entitlement, Profile, recordId } from '../kernel/shapes.js';
import { Life } from '../billing/life.js';

const whoami = createRoute({
  method: 'get',
  path: '/whoami',
  summary: "The token's user, or the developer who owns the key's app",
  security: API_SECURITY,
  request: { query: NO_QUERY },
  responses: { 200: apiJson('The profile', Profile), ...apiErrors(403, 404) },
});

const entitlements = createRoute({
  method: 'get',
  path: '/entitlements',
  summary: "A user's entitlement: a token needs no parameters, an API key names the user",
  security: API_SECURITY,
  request: {
    query: z.strictObject({
      user_id: z
        .string()
        .regex(/^usr_[A-Za-z0-9]+$/, 'must look like usr_…')
        .meta({ description: 'Required with an API key; with a token, its own user only' })
        .optional(),
      app_id: recordId('app').meta({ description: "The credentials' own app" }).optional(),
    }),
  },
  responses: { 200: apiJson("The user's entitlement", Entitlement), ...apiErrors(403, 404) },
});

/** Who is calling, and what they are entitled to. */
export const identityApi = new Hono<SandboxEnv>();

openapi(identityApi, whoami, (c) => {
  const p = c.get('principal');
  requireScope(p, 'identity:read');
  const user = p.kind === 'token' ? p.user : c.get('core').ledger.user(p.app.owner_id);
  if (!user) throw new SandboxApiError(404, 'not_found', 'The owner of this app no longer exists.');
  return c.json(profileView(c.get('core'), user), 200);
});

openapi(identityApi, entitlements, (c) => {
  const p = c.get('principal');
  requireScope(p, 'entitlements:read');
  const appId = c.get('query').app_id;
  if (appId !== undefined && appId !== p.app.id) {
    throw new SandboxApiError(
      403,
      'forbidden',
      `These credentials belong to app "${p.app.id}", not "${appId}".`,
    );
  }
  let userId = c.get('query').user_id;
  if (p.kind === 'token') {
    if (userId !== undefined && userId !== p.user.id) {
      throw new SandboxApiError(403, 'forbidden', "A user token can only read its own user's entitlement.");
    }
    userId = p.user.id;
  } else if (userId === undefined || userId === '') {
    throw invalidRequest('Query parameter "user_id" is required with an API key.');
  }
  if (c.get('core').ledger.user(userId) === undefined) {
    throw new SandboxApiError(404, 'not_found', `No user "${userId}".`);
  }
  const ent = c.get('core').services.get(Life).currentEntitlement(p.app.id, userId);
  if (ent === null) {
    throw new SandboxApiError(404, 'not_found', `User "${userId}" has no entitlement on app "${p.app.id}".`);
  }
  return c.json(ent, 200);
});
