import { z } from 'zod';
import { EVENT_NAMES } from '../../wire.js';
import { DELIVERY_STATES } from './deliveries/delivery-records.js';
import { PAYMENT_BEHAVIOURS, PLAN_KINDS, SCOPES, STATUSES } from './storage/records.js';

// The records the API answers with, as zod schemas: the route declarations name them for each
// status (src/sandbox/kernel/http/declare.ts) and the view functions that make them are typed by them, so
// an answer and its description cannot part. Strict: a field not declared here is a type error.

/** An ISO 8601 UTC time as the sandbox writes it. */
export const stamp = z.iso.datetime();
/** A record id: its prefix, then letters, digits, `_` and `-` (fixtures may choose their own). */
export const recordId = (prefix: string) =>
  z.string().regex(new RegExp(`^${prefix}_[A-Za-z0-9_-]{1,60}$`), `must look like ${prefix}_…`);
/** A plan id: a developer-chosen slug. */
export const planId = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/);

/** A named record or null (`anyOf`: a nullable reference is not written right by the generator). */
export const orNull = <T extends z.ZodType>(schema: T) => z.union([schema, z.null()]);

/** One page of a list (docs/PROTOCOL.md, Lists). */
export const list = <T extends z.ZodType>(item: T) =>
  z.strictObject({ data: z.array(item), has_more: z.boolean(), next_cursor: z.string().nullable() });

export const App = z
  .strictObject({
    id: recordId('app'),
    name: z.string(),
    client_id: recordId('cid'),
    redirect_uris: z.array(z.string()),
    webhook_url: z.string().nullable(),
    embed_url: z.string().nullable(),
    created_at: stamp,
  })
  .meta({ id: 'App' });
export const AppWithSecret = App.extend({ client_secret: z.string() }).meta({ id: 'AppWithSecret' });

export const Price = z.strictObject({ amount: z.int().min(0), currency: z.string().regex(/^[A-Z]{3}$/) });
export const Plan = z
  .strictObject({
    id: planId,
    app_id: recordId('app'),
    name: z.string(),
    kind: z.enum(PLAN_KINDS),
    price: Price.nullable(),
    features: z.array(z.string()),
    api_call_limit: z.int().min(0).nullable(),
    trial_days: z.int().min(0).optional(),
    archived: z.boolean(),
    created_at: stamp,
    subscribers: z.int().min(0),
  })
  .meta({ id: 'Plan' });

export const Key = z
  .strictObject({ id: recordId('key'), mode: z.enum(['test', 'live']), last4: z.string(), created_at: stamp })
  .meta({ id: 'Key' });

export const Usage = z.strictObject({ api_calls: z.int().min(0), limit: z.int().min(0) });
export const Entitlement = z
  .strictObject({
    user_id: recordId('usr'),
    app_id: recordId('app'),
    plan: z.string(),
    status: z.enum(STATUSES),
    features: z.array(z.string()),
    usage: Usage,
    expires_at: stamp.optional(),
    cancelled_at: stamp.optional(),
  })
  .meta({ id: 'Entitlement' });

export const Profile = z
  .strictObject({ id: recordId('usr'), email: z.string(), name: z.string(), avatar_url: z.string() })
  .meta({ id: 'Profile' });

export const TestUser = z
  .strictObject({
    id: recordId('usr'),
    email: z.string(),
    name: z.string(),
    app_id: z.string().nullable(),
    plan: z.string().nullable(),
    status: z.enum(STATUSES).nullable(),
    expires_at: stamp.nullable(),
    cancelled_at: stamp.nullable(),
    payment_behaviour: z.enum(PAYMENT_BEHAVIOURS),
    usage: Usage.nullable(),
    scopes: z.array(z.enum(SCOPES)).describe("The scopes the user's grants to the app hold"),
  })
  .meta({ id: 'TestUser' });

export const Tokens = z
  .strictObject({
    access_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.int().min(0),
    refresh_token: z.string(),
    scope: z.string(),
  })
  .meta({ id: 'Tokens', description: 'RFC 6749 §5.1, with the scopes granted' });

export const Clock = z.strictObject({ now: stamp, offset_s: z.int() }).meta({ id: 'Clock' });

const CHARGE_KINDS = ['initial', 'renewal', 'retry'] as const;
const LifeEvent = z.discriminatedUnion('event', [
  z.strictObject({
    event: z.literal('subscription.created'),
    data: z.strictObject({ user_id: z.string(), plan: z.string() }),
  }),
  z.strictObject({
    event: z.literal('subscription.cancelled'),
    data: z.strictObject({
      user_id: z.string(),
      plan: z.string(),
      cancelled_at: stamp,
      reason: z.enum(['requested', 'payment_failed', 'plan_changed']),
    }),
  }),
]);
export const Transition = z
  .strictObject({
    at: stamp,
    app_id: z.string(),
    user_id: z.string(),
    plan: z.string(),
    transition: z.enum([
      'subscribed',
      'trial_started',
      'renewed',
      'renewal_declined',
      'retry_declined',
      'recovered',
      'expired',
      'cancelled',
      'plan_changed',
      'status_forced',
    ]),
    from: z.enum(STATUSES).nullable(),
    to: z.enum(STATUSES),
    payment: z
      .strictObject({
        id: z.string(),
        kind: z.enum(CHARGE_KINDS),
        outcome: z.enum(['succeeded', 'declined']),
        amount: z.int().min(0),
        currency: z.string(),
      })
      .optional(),
    events: z.array(LifeEvent),
  })
  .meta({ id: 'Transition' });

export const Payment = z
  .strictObject({
    id: z.string(),
    user_id: z.string(),
    plan: z.string(),
    amount: z.int().min(0),
    currency: z.string(),
    outcome: z.enum(['succeeded', 'declined']),
    kind: z.enum(CHARGE_KINDS),
    created_at: stamp,
  })
  .meta({ id: 'Payment' });

export const Attempt = z
  .strictObject({
    at: stamp,
    status: z.int().nullable(),
    latency_ms: z.number().min(0).nullable(),
    error: z.string().nullable(),
    response_excerpt: z.string().nullable().optional(),
  })
  .meta({ id: 'Attempt' });
const deliveryFields = {
  id: recordId('dlv'),
  app_id: z.string(),
  event: z.string(),
  state: z.enum(DELIVERY_STATES),
  created_at: stamp,
  url: z.string().nullable(),
  attempt_count: z.int().min(0),
  last_attempt: orNull(Attempt),
  next_attempt_at: stamp.nullable(),
};
/** A delivery as listed. */
export const DeliverySummary = z.strictObject(deliveryFields).meta({ id: 'DeliverySummary' });
/** One delivery with its attempts and the body it sends. */
export const Delivery = z
  .strictObject({ ...deliveryFields, attempts: z.array(Attempt), body: z.string() })
  .meta({ id: 'Delivery' });

export const LogEntry = z
  .strictObject({
    id: z.string(),
    at: stamp,
    method: z.string(),
    path: z.string(),
    params: z
      .record(z.string(), z.string())
      .describe("The path's parameters that have the shape of an id (a plan's id, a user's)"),
    status: z.int(),
    latency_ms: z.number().min(0),
    credential: z.strictObject({ kind: z.enum(['test_key', 'live_key', 'token']), id: z.string() }),
    user_id: z.string().nullable(),
    error_code: z.string().nullable(),
  })
  .meta({ id: 'LogEntry' });

/** A link that works once, until `expires_at`. */
export const Link = z.strictObject({ url: z.string(), expires_at: stamp }).meta({ id: 'Link' });

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
    return [event, z.strictObject({ event: z.literal(event), timestamp: stamp, data: z.strictObject(data) })];
  }),
) as unknown as Record<(typeof EVENT_NAMES)[number], z.ZodType>;

/** A `scope` parameter: one or more known scopes, separated by a space. */
export const SCOPE_LIST = `^(${SCOPES.join('|')})( (${SCOPES.join('|')}))*$`;
