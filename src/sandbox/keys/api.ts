import { Hono } from 'hono';
import { z } from 'zod';
import { routeApp } from '../kernel/http/auth.js';
import type { SandboxEnv } from '../kernel/http/env.js';
import { paginate } from '../kernel/http/paging.js';
import { SandboxApiError } from '../kernel/http/problem.js';
import { createRoute, openapi } from '../kernel/http/declare.js';
import { API_SECURITY, apiErrors, apiJson, apiNoContent, writeErrors } from '../kernel/http/responses.js';
import { LIST_QUERY, NO_QUERY } from '../kernel/http/schemas.js';
import { Key, list, recordId } from '../kernel/shapes.js';
import { isoStamp, newApiKey, randomId } from '../kernel/ids.js';
import { keyView } from '../kernel/model.js';
import type { KeyRecord } from '../kernel/storage/records.js';

const appPath = z.strictObject({ app_id: recordId('app') });

const routes = {
  list: createRoute({
    method: 'get',
    path: '/apps/{app_id}/keys',
    summary: "The app's API keys (never their secret)",
    security: API_SECURITY,
    request: { params: appPath, query: LIST_QUERY },
    responses: { 200: apiJson('API keys', list(Key)), ...apiErrors(403, 404) },
  }),
  create: createRoute({
    method: 'post',
    path: '/apps/{app_id}/keys',
    summary: 'Creates a key; the answer carries its secret once',
    security: API_SECURITY,
    request: {
      params: appPath,
      query: NO_QUERY,
      body: {
        required: true,
        content: { 'application/json': { schema: z.strictObject({ mode: z.enum(['test', 'live']) }) } },
      },
    },
    responses: {
      201: apiJson('The new key, with its secret (once)', Key.extend({ key: z.string() })),
      ...writeErrors(403, 404),
    },
  }),
  remove: createRoute({
    method: 'delete',
    path: '/apps/{app_id}/keys/{key_id}',
    summary: 'Revokes the key: it stops working at once and its streams close',
    security: API_SECURITY,
    request: {
      params: z.strictObject({ app_id: recordId('app'), key_id: recordId('key') }),
      query: NO_QUERY,
    },
    responses: { 204: apiNoContent('Revoked'), ...apiErrors(403, 404, 507) },
  }),
};

/** An app's API keys. */
export const keysApi = new Hono<SandboxEnv>();

openapi(keysApi, routes.list, (c) => {
  const app = routeApp(c);
  const { ledger } = c.get('core');
  const view = (id: string) => {
    const key = ledger.key(id);
    return key && keyView(key);
  };
  return c.json(paginate(c.get('query'), ledger.keyIds(app.id), view), 200);
});

openapi(keysApi, routes.create, (c) => {
  const app = routeApp(c);
  const mode = c.get('body').mode;
  const key: KeyRecord = {
    id: randomId('key', 8),
    app_id: app.id,
    mode,
    key: newApiKey(mode),
    created_at: isoStamp(c.get('core').now()),
  };
  c.get('core').ledger.commit({ op: 'key', v: key });
  return c.json({ ...keyView(key), key: key.key }, 201);
});

openapi(keysApi, routes.remove, (c) => {
  const app = routeApp(c);
  const key = c.get('core').ledger.key(c.req.param('key_id'));
  if (!key || key.app_id !== app.id) {
    throw new SandboxApiError(404, 'not_found', `No key "${c.req.param('key_id')}".`);
  }
  // Its streams end with it (the stream registry hears the removal: src/sandbox/kernel/streams.ts).
  c.get('core').ledger.commit({ op: 'key-', id: key.id });
  return c.body(null, 204);
});
