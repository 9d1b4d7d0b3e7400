import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Hono } from 'hono';
import { z } from 'zod';
import { requireScope, routeApp } from '../http/auth.js';
import type { RouteContext, SandboxEnv } from '../http/env.js';
import type { TokenRecord } from '../storage/records.js';
import { SandboxApiError } from '../http/problem.js';
import { emptyBody, jsonBody, noQuery, query } from '../http/schemas.js';
import {
  getDelivery,
  listDeliveries,
  listRequests,
  RecordsQueryError,
  streamRequests,
} from './records-api.js';
import { credentialOf, writeOpen } from '../streams.js';

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

const optional = z.string().optional();
const params = (q: Record<string, string | undefined>) =>
  new URLSearchParams(Object.entries(q).filter((e): e is [string, string] => e[1] !== undefined));

/** The record of the Bearer token the request presents (authenticated already), or undefined for a key. */
function presentedToken(c: RouteContext): TokenRecord | undefined {
  const token = /^Bearer +(\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1];
  return token === undefined ? undefined : c.get('core').ledger.token(token);
}

/** The console's API room: one-time console links, the deliveries record and the request log. */
export const consoleApi = new Hono<SandboxEnv>()
  // A console link for the developer: asked with one of their app's keys (the console then shows
  // that app only) or their own sign-in with apps:write (the simulator never issues that scope).
  .post('/console/sessions', noQuery, emptyBody, async (c) => {
    const core = c.get('core');
    const p = c.get('principal');
    if (p.kind === 'token') requireScope(p, 'apps:write');
    const developer = p.kind === 'key' ? core.ledger.user(p.app.owner_id) : p.user;
    if (!developer) throw new SandboxApiError(404, 'not_found', 'The developer of this app is gone.');
    const link = await core.console.link({
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
  })
  // Sign-out: the token presented (the console session's own) dies at once; a token may always end itself.
  .delete('/console/session', noQuery, (c) => {
    const record = presentedToken(c);
    if (!record) throw new SandboxApiError(404, 'not_found', 'Only a Bearer token can end itself here.');
    c.get('core').ledger.commit({ op: 'token-', token: record.token });
    return c.body(null, 204);
  })
  // A link to the app's dashboard page, for whoever may manage the app (`mkt apps preview`).
  .post(
    '/apps/:app_id/preview-links',
    noQuery,
    jsonBody(
      z.strictObject({
        user_id: z
          .string()
          .regex(/^usr_[\w-]+$/)
          .optional(),
      }),
    ),
    (c) => {
      const app = routeApp(c);
      return c.json(c.get('core').console.previewLink(app.id, c.get('body').user_id), 201);
    },
  )
  .get(
    '/apps/:app_id/deliveries',
    query(z.strictObject({ event: optional, state: optional, limit: optional, cursor: optional })),
    (c) => {
      const app = routeApp(c);
      return c.json(
        answer(() => listDeliveries(c.get('core').console.deliveries, app.id, params(c.get('query')))),
      );
    },
  )
  .get('/apps/:app_id/deliveries/:delivery_id', noQuery, (c) => {
    const app = routeApp(c);
    return c.json(
      answer(() => getDelivery(c.get('core').console.deliveries, app.id, c.req.param('delivery_id'))),
    );
  })
  // One attempt now, answered with the delivery and that attempt.
  .post('/apps/:app_id/deliveries/:delivery_id/resend', noQuery, emptyBody, async (c) => {
    const app = routeApp(c);
    const core = c.get('core');
    const id = c.req.param('delivery_id');
    const record = core.console.deliveries.record(app.id, id);
    if (!record) throw new SandboxApiError(404, 'not_found', `No delivery "${id}" of app "${app.id}".`);
    if (app.webhook_url === null) {
      throw new SandboxApiError(
        409,
        'no_webhook_url',
        `App ${app.id} has no webhook URL to send to; set one with: mkt apps update --app ${app.id} --webhook-url URL`,
      );
    }
    await core.deliveries.resend({ ...app, webhook_url: app.webhook_url }, record);
    return c.json(answer(() => getDelivery(core.console.deliveries, app.id, id)));
  })
  .get(
    '/apps/:app_id/logs',
    query(
      z.strictObject({
        since: optional,
        status: optional,
        path: optional,
        limit: optional,
        cursor: optional,
      }),
    ),
    (c) => {
      const app = routeApp(c);
      return c.json(
        answer(() => listRequests(c.get('core').console.requestLog, app.id, params(c.get('query')))),
      );
    },
  )
  // Server-Sent Events, resuming after Last-Event-ID; written to the Node response as the relay is.
  .get('/apps/:app_id/logs/stream', query(z.strictObject({ status: optional, path: optional })), (c) => {
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
        c.get('core').console.requestLog,
        app.id,
        params(c.get('query')),
        c.req.header('last-event-id'),
        write,
      ),
    );
    res.on('close', stop);
    // Ends when the credential that opened it is gone, as the relay does (src/sandbox/streams.ts).
    c.get('core').streams.add(res, { kind: 'log', appId: app.id, ...credentialOf(c.get('principal')) });
    return RESPONSE_ALREADY_SENT;
  });
