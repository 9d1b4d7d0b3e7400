import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Hono } from 'hono';
import { z } from 'zod';
import { EVENT_NAMES } from '../../wire.js';
import { requireScope, routeApp } from '../kernel/http/auth.js';
import type { RouteContext, SandboxEnv } from '../kernel/http/env.js';
import type { TokenRecord } from '../kernel/storage/records.js';
import { SandboxApiError } from '../kernel/http/problem.js';
import { createRoute, openapi } from '../kernel/http/declare.js';
import {
  API_SECURITY,
  apiErrors,
  apiJson,
  apiNoContent,
  apiStream,
  writeErrors,
} from '../kernel/http/responses.js';
import { cursorParam, limitParam, NO_QUERY } from '../kernel/http/schemas.js';
import { Delivery, DeliverySummary, Link, list, LogEntry, recordId } from '../kernel/shapes.js';
import {
  getDelivery,
  listDeliveries,
  listRequests,
  RecordsQueryError,
  streamRequests,
} from './records-api.js';
import { credentialOf, writeOpen } from '../kernel/streams.js';
import { ConsoleRoom } from './room.js';

/** Runs a records query, its refusals turned into the sandbox's one error. */
function answer<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof RecordsQueryError)
      throw new SandboxApiError(error.status, error.code, error.message);
    throw error;
  }
}

const params = (q: Record<string, string | undefined>) =>
  new URLSearchParams(Object.entries(q).filter((e): e is [string, string] => e[1] !== undefined));

/** The record of the Bearer token the request presents (authenticated already), or undefined for a key. */
function presentedToken(c: RouteContext): TokenRecord | undefined {
  const token = /^Bearer +(\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1];
  return token === undefined ? undefined : c.get('core').ledger.token(token);
}

const appPath = z.strictObject({ app_id: recordId('app') });
const deliveryPath = z.strictObject({ app_id: recordId('app'), delivery_id: recordId('dlv') });
const EMPTY = { required: false, content: { 'application/json': { schema: z.strictObject({}) } } };
const statusFilter = z
  .string()
  .regex(/^[1-5](\d\d|xx)(,[1-5](\d\d|xx))*$/)
  .meta({ description: 'A status (404), a class (4xx) or a list of them (4xx,500)' })
  .optional();
const pathFilter = z.string().meta({ description: 'Requests whose path contains this text' }).optional();

const routes = {
  sessions: createRoute({
    method: 'post',
    path: '/console/sessions',
    summary:
      "A one-time console link for the developer (one of their app's keys, or their sign-in with apps:write)",
    security: API_SECURITY,
    request: { query: NO_QUERY, body: EMPTY },
    responses: { 201: apiJson('A one-time console link', Link), ...writeErrors(403, 404) },
  }),
  endSession: createRoute({
    method: 'delete',
    path: '/console/session',
    summary: 'Sign-out: the Bearer token presented dies at once (a token may always end itself)',
    security: [{ bearer: [] }],
    request: { query: NO_QUERY },
    responses: { 204: apiNoContent("The console session's token is revoked"), ...apiErrors(404, 507) },
  }),
  preview: createRoute({
    method: 'post',
    path: '/apps/{app_id}/preview-links',
    summary: "A link to the app's dashboard page with a preview pass (`mkt apps preview`)",
    security: API_SECURITY,
    request: {
      params: appPath,
      query: NO_QUERY,
      body: {
        required: false,
        content: {
          'application/json': {
            schema: z.strictObject({
              user_id: z
                .string()
                .regex(/^usr_[\w-]+$/)
                .optional(),
            }),
          },
        },
      },
    },
    responses: { 201: apiJson('A dashboard link with a preview pass', Link), ...writeErrors(403, 404) },
  }),
  deliveries: createRoute({
    method: 'get',
    path: '/apps/{app_id}/deliveries',
    summary: "The app's deliveries, newest first",
    security: API_SECURITY,
    request: {
      params: appPath,
      query: z.strictObject({
        event: z
          .string()
          .meta({ enum: EVENT_NAMES } as never)
          .optional(),
        state: z
          .string()
          .meta({ enum: ['pending', 'succeeded', 'failed'] } as never)
          .optional(),
        limit: limitParam,
        cursor: cursorParam.meta({ pattern: '^\\d{1,15}$' }),
      }),
    },
    responses: { 200: apiJson('Deliveries, newest first', list(DeliverySummary)), ...apiErrors(403, 404) },
  }),
  delivery: createRoute({
    method: 'get',
    path: '/apps/{app_id}/deliveries/{delivery_id}',
    summary: 'A delivery with its attempts and its body',
    security: API_SECURITY,
    request: { params: deliveryPath, query: NO_QUERY },
    responses: { 200: apiJson('A delivery with its attempts', Delivery), ...apiErrors(403, 404) },
  }),
  resend: createRoute({
    method: 'post',
    path: '/apps/{app_id}/deliveries/{delivery_id}/resend',
    summary: 'One attempt now, answered with the delivery and that attempt',
    security: API_SECURITY,
    request: { params: deliveryPath, query: NO_QUERY, body: EMPTY },
    responses: { 200: apiJson('Sent again', Delivery), ...writeErrors(403, 404, 409) },
  }),
  logs: createRoute({
    method: 'get',
    path: '/apps/{app_id}/logs',
    summary: "The app's request log, newest first",
    security: API_SECURITY,
    request: {
      params: appPath,
      query: z.strictObject({
        since: z
          .string()
          .meta({
            description: 'A request id (req_…) or an ISO 8601 time',
            pattern:
              '^(req_[A-Za-z0-9_-]{1,60}|\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|1\\d|2[0-8])(T([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,3})?)?(Z|[+-]([01]\\d|2[0-3]):[0-5]\\d))?)$',
          })
          .optional(),
        status: statusFilter,
        path: pathFilter,
        limit: limitParam,
        cursor: cursorParam,
      }),
    },
    responses: { 200: apiJson('The request log', list(LogEntry)), ...apiErrors(403, 404) },
  }),
  logStream: createRoute({
    method: 'get',
    path: '/apps/{app_id}/logs/stream',
    summary: 'The request log, live (Server-Sent Events, resuming after Last-Event-ID)',
    security: API_SECURITY,
    request: {
      params: appPath,
      query: z.strictObject({ status: statusFilter, path: pathFilter }),
      headers: z.object({ 'last-event-id': z.string().optional() }),
    },
    responses: { 200: apiStream('The request log, live'), ...apiErrors(403, 404) },
  }),
};

/** The console's API room: one-time console links, the deliveries record and the request log. */
export const consoleApi = new Hono<SandboxEnv>();

// Asked with one of their app's keys (the console then shows that app only) or their own sign-in
// with apps:write (the simulator never issues that scope).
openapi(consoleApi, routes.sessions, async (c) => {
  const core = c.get('core');
  const p = c.get('principal');
  if (p.kind === 'token') requireScope(p, 'apps:write');
  const developer = p.kind === 'key' ? core.ledger.user(p.app.owner_id) : p.user;
  if (!developer) throw new SandboxApiError(404, 'not_found', 'The developer of this app is gone.');
  const link = await core.services.get(ConsoleRoom).link({
    developerId: developer.id,
    appId: p.app.id,
    key: p.kind === 'key' ? { id: p.key.id, secret: p.key.key } : undefined,
    grant:
      p.kind === 'token'
        ? { family: p.family, scopes: p.scopes, expiresAt: presentedToken(c)?.expires_at ?? null }
        : undefined,
    label:
      p.kind === 'key'
        ? `${developer.name} · ${p.app.name} (key ${p.key.id})`
        : `${developer.name} <${developer.email}>`,
  });
  return c.json(link, 201);
});

openapi(consoleApi, routes.endSession, (c) => {
  const record = presentedToken(c);
  if (!record) throw new SandboxApiError(404, 'not_found', 'Only a Bearer token can end itself here.');
  c.get('core').ledger.commit({ op: 'token-', token: record.token });
  return c.body(null, 204);
});

openapi(consoleApi, routes.preview, (c) => {
  const app = routeApp(c);
  return c.json(c.get('core').services.get(ConsoleRoom).previewLink(app.id, c.get('body').user_id), 201);
});

openapi(consoleApi, routes.deliveries, (c) => {
  const app = routeApp(c);
  return c.json(
    answer(() =>
      listDeliveries(c.get('core').services.get(ConsoleRoom).deliveries, app.id, params(c.get('query'))),
    ),
    200,
  );
});

openapi(consoleApi, routes.delivery, (c) => {
  const app = routeApp(c);
  return c.json(
    answer(() =>
      getDelivery(c.get('core').services.get(ConsoleRoom).deliveries, app.id, c.req.param('delivery_id')),
    ),
    200,
  );
});

openapi(consoleApi, routes.resend, async (c) => {
  const app = routeApp(c);
  const core = c.get('core');
  const id = c.req.param('delivery_id');
  const record = core.services.get(ConsoleRoom).deliveries.record(app.id, id);
  if (!record) throw new SandboxApiError(404, 'not_found', `No delivery "${id}" of app "${app.id}".`);
  if (app.webhook_url === null) {
    throw new SandboxApiError(
      409,
      'no_webhook_url',
      `App ${app.id} has no webhook URL to send to; set one with: mkt apps update --app ${app.id} --webhook-url URL`,
    );
  }
  await core.deliveries.resend({ ...app, webhook_url: app.webhook_url }, record);
  return c.json(
    answer(() => getDelivery(core.services.get(ConsoleRoom).deliveries, app.id, id)),
    200,
  );
});

openapi(consoleApi, routes.logs, (c) => {
  const app = routeApp(c);
  return c.json(
    answer(() =>
      listRequests(c.get('core').services.get(ConsoleRoom).requestLog, app.id, params(c.get('query'))),
    ),
    200,
  );
});

// Written to the Node response as the relay is.
openapi(consoleApi, routes.logStream, (c) => {
  const app = routeApp(c);
  const res = c.env.outgoing;
  const write = (text: string) => {
    if (!res.headersSent)
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
      });
    writeOpen(res, text);
  };
  const stop = answer(() =>
    streamRequests(
      c.get('core').services.get(ConsoleRoom).requestLog,
      app.id,
      params(c.get('query')),
      c.req.header('last-event-id'),
      write,
    ),
  );
  res.on('close', stop);
  // Ends when the credential that opened it is gone, as the relay does (src/sandbox/kernel/streams.ts).
  c.get('core').streams.add(res, { kind: 'log', appId: app.id, ...credentialOf(c.get('principal')) });
  return RESPONSE_ALREADY_SENT;
});
