import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Hono } from 'hono';
import { z } from 'zod';
import { routeApp } from '../kernel/http/auth.js';
import { createRoute, openapi } from '../kernel/http/declare.js';
import type { SandboxEnv } from '../kernel/http/env.js';
import { invalidRequest } from '../kernel/http/problem.js';
import { API_SECURITY, apiErrors, apiStream } from '../kernel/http/responses.js';
import { recordId } from '../kernel/shapes.js';
import { credentialOf } from '../kernel/streams.js';

const sequence = z.string().regex(/^(\s*\d{1,15}\s*)?$/, 'must be a delivery sequence number');

const stream = createRoute({
  method: 'get',
  path: '/apps/{app_id}/webhooks/stream',
  summary: 'The relay: every signed delivery of the app as Server-Sent Events, resuming after Last-Event-ID',
  security: API_SECURITY,
  request: {
    params: z.strictObject({ app_id: recordId('app') }),
    query: z.strictObject({
      lastEventId: sequence
        .meta({ description: 'Last-Event-ID, as EventSource polyfills send it' })
        .optional(),
    }),
    headers: z.object({
      'last-event-id': sequence
        .meta({ description: 'The last delivery sequence number received' })
        .optional(),
    }),
  },
  responses: { 200: apiStream('The relay stream of deliveries'), ...apiErrors(403, 404) },
});

/**
 * The relay (Server-Sent Events), resuming after `Last-Event-ID` (or the `lastEventId` query
 * parameter EventSource polyfills send); without it, a `position` event and live deliveries, no
 * history (docs/PROTOCOL.md, Relay stream). The relay writes the Node response itself.
 */
export const relayApi = new Hono<SandboxEnv>();

openapi(relayApi, stream, (c) => {
  const app = routeApp(c);
  const header = c.req.header('last-event-id') ?? c.get('query').lastEventId;
  let lastEventId: number | undefined;
  if (header !== undefined && header !== '') {
    if (!/^\d{1,15}$/.test(header.trim())) {
      throw invalidRequest('"Last-Event-ID" must be a delivery sequence number.');
    }
    lastEventId = Number(header.trim());
  }
  const owner = { appId: app.id, ...credentialOf(c.get('principal')) };
  void c.get('core').relay.subscribe(c.env.outgoing, owner, lastEventId);
  return RESPONSE_ALREADY_SENT;
});
