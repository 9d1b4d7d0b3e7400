import { z } from 'zod';
import { EVENT_NAMES } from '../../wire.js';
import { DELIVERY_STATES } from '../console/delivery-records.js';
import { fixturesSchema } from '../fixtures/schema.js';
import { PAYMENT_BEHAVIOURS } from '../billing/records.js';
import { PLAN_KINDS, SCOPES, STATUSES } from '../storage/records.js';

// What each route answers when it succeeds: the requests are described by the schemas that check
// them (src/sandbox/http/schemas.ts); answers had no schema, so they are described here, once.
// A route missing from ANSWERS fails the document's generation (and so its test).

const stamp = z.string().describe('ISO 8601 UTC time');
const nullableStamp = stamp.nullable();
const list = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), has_more: z.boolean(), next_cursor: z.string().nullable() });

const app = z.object({
  id: z.string(),
  name: z.string(),
  client_id: z.string(),
  redirect_uris: z.array(z.string()),
  webhook_url: z.string().nullable(),
  embed_url: z.string().nullable(),
  created_at: stamp,
});
const price = z.object({ amount: z.number().int(), currency: z.string() }).nullable();
const plan = z.object({
  id: z.string(),
  app_id: z.string(),
  name: z.string(),
  kind: z.enum(PLAN_KINDS),
  price,
  features: z.array(z.string()),
  api_call_limit: z.number().int().nullable(),
  trial_days: z.number().int().optional(),
  archived: z.boolean(),
  created_at: stamp,
  subscribers: z.number().int(),
});
const key = z.object({
  id: z.string(),
  mode: z.enum(['test', 'live']),
  last4: z.string(),
  created_at: stamp,
});
const usage = z.object({ api_calls: z.number().int(), limit: z.number().int() });
const entitlement = z.object({
  user_id: z.string(),
  app_id: z.string(),
  plan: z.string(),
  status: z.enum(STATUSES),
  features: z.array(z.string()),
  usage,
  expires_at: stamp.optional(),
  cancelled_at: stamp.optional(),
});
const testUser = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  app_id: z.string().nullable(),
  plan: z.string().nullable(),
  status: z.enum(STATUSES).nullable(),
  expires_at: nullableStamp,
  cancelled_at: nullableStamp,
  payment_behaviour: z.enum(PAYMENT_BEHAVIOURS),
  usage: usage.nullable(),
  scopes: z.array(z.enum(SCOPES)).describe("The scopes the user's grants to the app hold"),
});
const clock = z.object({ now: stamp, offset_s: z.number().int() });
const transition = z.looseObject({
  at: stamp,
  app_id: z.string(),
  user_id: z.string(),
  plan: z.string(),
  transition: z.string(),
  from: z.enum(STATUSES).nullable(),
  to: z.enum(STATUSES),
  events: z.array(z.looseObject({ event: z.enum(EVENT_NAMES), data: z.record(z.string(), z.unknown()) })),
});
const tokens = z.object({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  refresh_token: z.string(),
  scope: z.string(),
});
const payment = z.object({
  id: z.string(),
  user_id: z.string(),
  plan: z.string(),
  amount: z.number().int(),
  currency: z.string(),
  outcome: z.enum(['succeeded', 'declined']),
  kind: z.enum(['initial', 'renewal', 'retry']),
  created_at: stamp,
});
const delivery = z.looseObject({
  id: z.string(),
  event: z.string(),
  state: z.enum(DELIVERY_STATES),
});
const logEntry = z.looseObject({
  id: z.string(),
  at: stamp,
  method: z.string(),
  path: z.string(),
  status: z.number().int(),
});

/** The webhook envelope of each event (docs/PROTOCOL.md, webhooks). */
export const ENVELOPES = Object.fromEntries(
  EVENT_NAMES.map((event) => {
    const data: Record<string, z.ZodType> = event.startsWith('user.')
      ? { user_id: z.string(), app_id: z.string(), scopes: z.array(z.enum(SCOPES)) }
      : { user_id: z.string(), plan: z.string() };
    if (event === 'subscription.cancelled') {
      data.cancelled_at = stamp;
      data.reason = z.enum(['requested', 'payment_failed', 'plan_changed']).optional();
    }
    return [event, z.object({ event: z.literal(event), timestamp: stamp, data: z.looseObject(data) })];
  }),
) as unknown as Record<(typeof EVENT_NAMES)[number], z.ZodType>;

/** One success answer: its status and its JSON body (none for 204), or another media type. */
export interface Answer {
  status: number;
  body?: z.ZodType;
  media?: string;
  summary: string;
}

const json = (status: number, body: z.ZodType, summary: string): Answer => ({ status, body, summary });
const html = (status: number, summary: string): Answer => ({ status, media: 'text/html', summary });

/** Each route's success answers, keyed `METHOD path` as the router names the route. */
export const ANSWERS: Record<string, Answer[]> = {
  'GET /': [html(200, 'The sandbox home page')],
  'GET /dashboard/apps/:app_id': [html(200, "The marketplace dashboard with the app's embedded page")],
  'GET /avatars/:file': [{ status: 200, media: 'image/svg+xml', summary: "A user's avatar" }],
  'GET /.well-known/oauth-authorization-server': [
    json(
      200,
      z.looseObject({ issuer: z.string(), authorization_endpoint: z.string(), token_endpoint: z.string() }),
      'RFC 8414 metadata',
    ),
  ],
  'GET /oauth/authorize': [html(200, 'The consent page')],
  'POST /oauth/authorize': [{ status: 302, summary: 'The decision, redirected to the app' }],
  'POST /api/oauth/token': [json(200, tokens, 'Tokens (RFC 6749 §5.1)')],
  'POST /api/v1/oauth/token': [json(200, tokens, 'Tokens (RFC 6749 §5.1)')],
  'POST /api/oauth/device_authorization': [
    json(
      200,
      z.object({
        device_code: z.string(),
        user_code: z.string(),
        verification_uri: z.string(),
        verification_uri_complete: z.string(),
        expires_in: z.number().int(),
        interval: z.number().int(),
      }),
      'A device code and the code the person types (RFC 8628 §3.2)',
    ),
  ],
  'GET /oauth/device': [html(200, 'The device verification page')],
  'POST /oauth/device': [html(200, 'The decision on the verification page')],
  'GET /payouts/connect/:link_id': [html(200, "The simulated processor's connect page")],
  'POST /payouts/connect/:link_id': [
    html(200, 'The decision on the connect page'),
    { status: 303, summary: 'Back to the app' },
  ],
  'GET /api/v1/openapi.json': [json(200, z.looseObject({ openapi: z.string() }), 'This document')],
  'GET /api/v1/whoami': [
    json(
      200,
      z.object({ id: z.string(), email: z.string(), name: z.string(), avatar_url: z.string() }),
      'The profile',
    ),
  ],
  'GET /api/v1/entitlements': [json(200, entitlement, "A user's entitlement")],
  'GET /api/v1/apps': [json(200, list(app), 'Apps')],
  'POST /api/v1/apps': [
    json(201, app.extend({ client_secret: z.string() }), 'The new app, with its client secret (once)'),
  ],
  'GET /api/v1/apps/:app_id': [json(200, app, 'An app')],
  'PATCH /api/v1/apps/:app_id': [json(200, app, 'The app changed')],
  'DELETE /api/v1/apps/:app_id': [{ status: 204, summary: 'Deleted' }],
  'POST /api/v1/apps/:app_id/client-secret': [
    json(200, app.extend({ client_secret: z.string() }), 'A new client secret'),
  ],
  'GET /api/v1/apps/:app_id/webhook-secret': [
    json(200, z.object({ webhook_secret: z.string() }), 'The webhook secret'),
  ],
  'POST /api/v1/apps/:app_id/webhook-secret': [
    json(200, z.object({ webhook_secret: z.string() }), 'A new webhook secret'),
  ],
  'GET /api/v1/apps/:app_id/plans': [json(200, list(plan), 'Plans')],
  'POST /api/v1/apps/:app_id/plans': [json(201, plan, 'The new plan')],
  'GET /api/v1/apps/:app_id/plans/:plan_id': [json(200, plan, 'A plan')],
  'PATCH /api/v1/apps/:app_id/plans/:plan_id': [json(200, plan, 'The plan changed')],
  'DELETE /api/v1/apps/:app_id/plans/:plan_id': [
    json(200, plan, 'Archived (it has subscribers)'),
    { status: 204, summary: 'Deleted' },
  ],
  'GET /api/v1/apps/:app_id/keys': [json(200, list(key), 'API keys (never their secret)')],
  'POST /api/v1/apps/:app_id/keys': [
    json(201, key.extend({ key: z.string() }), 'The new key, with its secret (once)'),
  ],
  'DELETE /api/v1/apps/:app_id/keys/:key_id': [{ status: 204, summary: 'Revoked' }],
  'GET /api/v1/apps/:app_id/webhooks/stream': [
    { status: 200, media: 'text/event-stream', summary: 'The relay stream of deliveries' },
  ],
  'POST /api/v1/simulator/authorize': [
    json(201, tokens.extend({ user_id: z.string() }), 'Tokens for a test user'),
  ],
  'POST /api/v1/sandbox/export': [
    json(200, fixturesSchema, "The running sandbox's state as a fixtures file (a consistent snapshot)"),
  ],
  'GET /api/v1/simulator/clock': [json(200, clock, 'Business time')],
  'POST /api/v1/simulator/clock': [
    json(200, clock.extend({ from: stamp, transitions: z.array(transition) }), 'Business time moved'),
  ],
  'GET /api/v1/simulator/users': [json(200, list(testUser), 'Test users')],
  'POST /api/v1/simulator/users': [json(201, testUser, 'The new test user')],
  'GET /api/v1/simulator/users/:user_id': [json(200, testUser, 'A test user')],
  'PATCH /api/v1/simulator/users/:user_id': [json(200, testUser, 'The test user changed')],
  'POST /api/v1/simulator/users/:user_id/cancel': [json(200, testUser, 'Cancelled')],
  'POST /api/v1/simulator/users/:user_id/revoke': [
    json(
      200,
      z.object({
        user_id: z.string(),
        app_id: z.string(),
        scopes: z.array(z.enum(SCOPES)),
        tokens_revoked: z.number().int(),
      }),
      'Revoked',
    ),
  ],
  'POST /api/v1/simulator/events': [
    json(
      201,
      z.looseObject({
        delivery_id: z.string(),
        event: z.enum(EVENT_NAMES),
        envelope: z.looseObject({ event: z.string() }),
        transition: transition.nullable(),
      }),
      'The event enacted and its first delivery',
    ),
  ],
  'POST /api/v1/simulator/entitlement-checks': [
    json(
      200,
      z.looseObject({
        allowed: z.boolean(),
        reason: z.string(),
        now: stamp,
        entitlement: entitlement.nullable(),
      }),
      'The access rule',
    ),
  ],
  'GET /api/v1/apps/:app_id/payouts': [
    json(
      200,
      z.object({
        app_id: z.string(),
        linked: z.boolean(),
        account_id: z.string().nullable(),
        linked_at: nullableStamp,
      }),
      'The payment account',
    ),
  ],
  'POST /api/v1/apps/:app_id/payouts/link': [
    json(201, z.object({ url: z.string(), expires_at: stamp }), 'A connect link'),
  ],
  'GET /api/v1/apps/:app_id/payments': [json(200, list(payment), 'Charges')],
  'POST /api/v1/console/sessions': [
    json(201, z.looseObject({ url: z.string(), expires_at: stamp }), 'A one-time console link'),
  ],
  'DELETE /api/v1/console/session': [{ status: 204, summary: "The console session's token is revoked" }],
  'POST /api/v1/apps/:app_id/preview-links': [
    json(201, z.object({ url: z.string(), expires_at: stamp }), 'A dashboard link with a preview pass'),
  ],
  'GET /api/v1/apps/:app_id/deliveries': [json(200, list(delivery), 'Deliveries, newest first')],
  'GET /api/v1/apps/:app_id/deliveries/:delivery_id': [json(200, delivery, 'A delivery with its attempts')],
  'POST /api/v1/apps/:app_id/deliveries/:delivery_id/resend': [json(200, delivery, 'Sent again')],
  'GET /api/v1/apps/:app_id/logs': [json(200, list(logEntry), 'The request log')],
  'GET /api/v1/apps/:app_id/logs/stream': [
    { status: 200, media: 'text/event-stream', summary: 'The request log, live' },
  ],
};
