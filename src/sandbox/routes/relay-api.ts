import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Hono } from 'hono';
import { z } from 'zod';
import { routeApp } from '../http/auth.js';
import type { SandboxEnv } from '../http/env.js';
import { invalidRequest } from '../http/problem.js';
import { query } from '../http/schemas.js';
import { credentialOf } from '../streams.js';

/**
 * The relay (Server-Sent Events), resuming after `Last-Event-ID` (or the `lastEventId` query
 * parameter EventSource polyfills send); without it, a `position` event and live deliveries, no
 * history (docs/PROTOCOL.md, Relay stream). The relay writes the Node response itself.
 */
export const relayApi = new Hono<SandboxEnv>().get(
  '/apps/:app_id/webhooks/stream',
  query(z.strictObject({ lastEventId: z.string().optional() })),
  (c) => {
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
  },
);
