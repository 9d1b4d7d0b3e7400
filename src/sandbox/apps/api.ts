import { Hono } from 'hono';
import { z } from 'zod';
import { developerId, routeApp } from '../kernel/http/auth.js';
import type { SandboxEnv } from '../kernel/http/env.js';
import { paginate } from '../kernel/http/paging.js';
import { invalidRequest } from '../kernel/http/problem.js';
import { createRoute, openapi } from '../kernel/http/declare.js';
import { API_SECURITY, apiErrors, apiJson, apiNoContent, writeErrors } from '../kernel/http/responses.js';
import { httpUrl, LIST_QUERY, NO_QUERY, text } from '../kernel/http/schemas.js';
import { isoStamp, newClientSecret, newWebhookSecret, randomId } from '../kernel/ids.js';
import { appView } from '../kernel/model.js';
import { App, AppWithSecret, list, recordId } from '../kernel/shapes.js';
import type { AppRecord } from '../kernel/storage/records.js';

const appFields = {
  name: text(100),
  redirect_uris: z.array(httpUrl({ httpsOrLoopbackOnly: true })).max(20),
  webhook_url: httpUrl().nullable(),
  // The dashboard frames it with a token in its query: https, or a page on this machine.
  embed_url: httpUrl({ httpsOrLoopbackOnly: true }).nullable(),
};

const appPath = { params: z.strictObject({ app_id: recordId('app') }), query: NO_QUERY };
const EMPTY = { required: false, content: { 'application/json': { schema: z.strictObject({}) } } };
const appBody = <T extends z.ZodRawShape>(fields: T) => ({
  required: true,
  content: { 'application/json': { schema: z.strictObject(fields) } },
});
const createFields = {
  name: appFields.name,
  redirect_uris: appFields.redirect_uris.optional(),
  webhook_url: appFields.webhook_url.optional(),
  embed_url: appFields.embed_url.optional(),
};

const routes = {
  list: createRoute({
    method: 'get',
    path: '/apps',
    summary: 'Apps: with a key, its one app; with a developer token, every app the developer owns',
    security: API_SECURITY,
    request: { query: LIST_QUERY },
    responses: { 200: apiJson('Apps', list(App)), ...apiErrors(403) },
  }),
  create: createRoute({
    method: 'post',
    path: '/apps',
    summary: 'Creates an app for the developer (a key is refused); the answer carries the client secret once',
    security: API_SECURITY,
    request: { query: NO_QUERY, body: appBody(createFields) },
    responses: {
      201: apiJson('The new app, with its client secret (once)', AppWithSecret),
      ...writeErrors(403),
    },
  }),
  get: createRoute({
    method: 'get',
    path: '/apps/{app_id}',
    summary: 'An app',
    security: API_SECURITY,
    request: appPath,
    responses: { 200: apiJson('An app', App), ...apiErrors(403, 404) },
  }),
  update: createRoute({
    method: 'patch',
    path: '/apps/{app_id}',
    summary: 'Changes name, redirect URIs, webhook and embed URLs (at least one)',
    security: API_SECURITY,
    request: {
      ...appPath,
      body: {
        required: true,
        content: {
          'application/json': {
            schema: z
              .strictObject({
                name: appFields.name.optional(),
                redirect_uris: appFields.redirect_uris.optional(),
                webhook_url: appFields.webhook_url.optional(),
                embed_url: appFields.embed_url.optional(),
              })
              .meta({ minProperties: 1 } as never),
          },
        },
      },
    },
    responses: { 200: apiJson('The app changed', App), ...writeErrors(403, 404) },
  }),
  remove: createRoute({
    method: 'delete',
    path: '/apps/{app_id}',
    summary: 'Deletes the app with its plans, keys, test users and tokens; its streams close',
    security: API_SECURITY,
    request: appPath,
    responses: { 204: apiNoContent('Deleted'), ...apiErrors(403, 404, 507) },
  }),
  rotateClientSecret: createRoute({
    method: 'post',
    path: '/apps/{app_id}/client-secret',
    summary: "Rotates the client secret and shows it once; the app's streams close",
    security: API_SECURITY,
    request: { ...appPath, body: EMPTY },
    responses: { 200: apiJson('A new client secret', AppWithSecret), ...writeErrors(403, 404) },
  }),
  getWebhookSecret: createRoute({
    method: 'get',
    path: '/apps/{app_id}/webhook-secret',
    summary: 'The webhook signing secret',
    security: API_SECURITY,
    request: appPath,
    responses: {
      200: apiJson('The webhook secret', z.strictObject({ webhook_secret: z.string() })),
      ...apiErrors(403, 404),
    },
  }),
  rotateWebhookSecret: createRoute({
    method: 'post',
    path: '/apps/{app_id}/webhook-secret',
    summary: "Rotates the signing secret at once; the app's relay streams close, so that listeners reconnect",
    security: API_SECURITY,
    request: { ...appPath, body: EMPTY },
    responses: {
      200: apiJson('A new webhook secret', z.strictObject({ webhook_secret: z.string() })),
      ...writeErrors(403, 404),
    },
  }),
};

/** Apps, their client secret and their webhook signing secret. */
export const appsApi = new Hono<SandboxEnv>();

openapi(appsApi, routes.list, (c) => {
  const p = c.get('principal');
  const { ledger } = c.get('core');
  const ids = p.kind === 'key' ? [p.app.id] : ledger.appIds(developerId(p));
  const view = (id: string) => {
    const app = ledger.app(id);
    return app && appView(app);
  };
  return c.json(paginate(c.get('query'), ids, view), 200);
});

openapi(appsApi, routes.create, (c) => {
  const owner = developerId(c.get('principal'));
  const input = c.get('body');
  const app: AppRecord = {
    id: randomId('app', 8),
    owner_id: owner,
    name: input.name,
    client_id: randomId('cid', 12),
    client_secret: newClientSecret(),
    redirect_uris: input.redirect_uris ?? [],
    webhook_url: input.webhook_url ?? null,
    embed_url: input.embed_url ?? null,
    webhook_secret: newWebhookSecret(),
    created_at: isoStamp(c.get('core').now()),
  };
  c.get('core').ledger.commit({ op: 'app', v: app });
  return c.json({ ...appView(app), client_secret: app.client_secret }, 201);
});

openapi(appsApi, routes.get, (c) => c.json(appView(routeApp(c)), 200));

openapi(appsApi, routes.update, (c) => {
  const app = routeApp(c);
  const input = c.get('body');
  if (Object.keys(input).length === 0) throw invalidRequest('Send at least one field to change.');
  const next: AppRecord = { ...app };
  if (input.name !== undefined) next.name = input.name;
  if (input.redirect_uris !== undefined) next.redirect_uris = input.redirect_uris;
  if (input.webhook_url !== undefined) next.webhook_url = input.webhook_url;
  if (input.embed_url !== undefined) next.embed_url = input.embed_url;
  c.get('core').ledger.commit({ op: 'app', v: next });
  return c.json(appView(next), 200);
});

openapi(appsApi, routes.remove, (c) => {
  const app = routeApp(c);
  c.get('core').ledger.commit({ op: 'app-', id: app.id });
  return c.body(null, 204);
});

openapi(appsApi, routes.rotateClientSecret, (c) => {
  const app = routeApp(c);
  const next: AppRecord = { ...app, client_secret: newClientSecret() };
  c.get('core').ledger.commit({ op: 'app', v: next });
  c.get('core').streams.close((o) => o.appId === app.id);
  return c.json({ ...appView(next), client_secret: next.client_secret }, 200);
});

openapi(appsApi, routes.getWebhookSecret, (c) => c.json({ webhook_secret: routeApp(c).webhook_secret }, 200));

openapi(appsApi, routes.rotateWebhookSecret, (c) => {
  const app = routeApp(c);
  const next = { ...app, webhook_secret: newWebhookSecret() };
  c.get('core').ledger.commit({ op: 'app', v: next });
  c.get('core').streams.close((o) => o.kind === 'relay' && o.appId === app.id);
  return c.json({ webhook_secret: next.webhook_secret }, 200);
});
