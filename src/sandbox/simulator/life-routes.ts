import { z } from 'zod';
import { EVENT_NAMES } from '../../wire.js';
import { MAX_AHEAD_MS } from '../billing/clock.js';
import { PAYMENT_BEHAVIOURS } from '../billing/records.js';
import { createRoute } from '../kernel/http/declare.js';
import { API_SECURITY, apiErrors, apiJson, writeErrors } from '../kernel/http/responses.js';
import { cursorParam, int, limitParam, NO_QUERY, text } from '../kernel/http/schemas.js';
import { Clock, Entitlement, list, orNull, TestUser, Transition, stamp } from '../kernel/shapes.js';
import { SCOPES, STATUSES } from '../kernel/storage/records.js';

// The declarations of the marketplace's life (./life-api.ts holds the handlers).

const appId = text(64, /^app_[A-Za-z0-9]+$/);
const userId = text(64, /^usr_[A-Za-z0-9]+$/);
const planId = text(63, /^[a-z0-9][a-z0-9-]*$/);
const email = text(254, /^[^\s@]+@[^\s@]+\.[^\s@]+$/);
const behaviour = z.enum(PAYMENT_BEHAVIOURS as ['succeeds', 'declines', 'declines_renewals']);
const userPath = z.strictObject({ user_id: z.string().regex(/^usr_[A-Za-z0-9_-]{1,60}$/) });
const json = <S extends z.ZodType>(schema: S) => ({
  required: true,
  content: { 'application/json': { schema } },
});
const appOnly = json(z.strictObject({ app_id: appId }));

/** The first attempt of a delivery the request waited for. */
const FirstAttempt = z.strictObject({
  url: z.string().nullable(),
  status: z.enum(['delivered', 'failed', 'no_url']),
  response_status: z.int().nullable(),
  error: z.string().nullable(),
});

/** What `POST /simulator/events` answers. */
export const EventSent = z
  .strictObject({
    delivery_id: z.string(),
    event: z.enum(EVENT_NAMES),
    envelope: z.strictObject({
      event: z.string(),
      timestamp: stamp,
      data: z.unknown().describe('The event data, as enacted or (synthetic) as sent'),
    }),
    webhook: FirstAttempt,
    listeners: z.int().min(0).describe('Relay listeners the delivery reached'),
    transition: orNull(Transition),
  })
  .meta({ id: 'EventSent' });

/** What `POST /simulator/clock` answers. */
export const ClockAdvanced = Clock.extend({ from: stamp, transitions: z.array(Transition) }).meta({
  id: 'ClockAdvanced',
});

export const lifeRoutes = {
  clock: createRoute({
    method: 'get',
    path: '/simulator/clock',
    summary: 'Business time',
    security: API_SECURITY,
    request: { query: NO_QUERY },
    responses: { 200: apiJson('Business time', Clock), ...apiErrors(403) },
  }),
  advance: createRoute({
    method: 'post',
    path: '/simulator/clock',
    summary:
      'Moves business time forward (either `advance_s` or `to`); every transition on the way happens and is listed',
    security: API_SECURITY,
    request: {
      query: NO_QUERY,
      body: json(
        z
          .strictObject({
            advance_s: int(1, MAX_AHEAD_MS / 1000).optional(),
            to: text(40)
              .meta({
                description:
                  'An ISO 8601 date or time with a four-digit year, at most 100 years past real time',
                pattern:
                  '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|1\\d|2[0-8])(T([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,3})?)?(Z|[+-]([01]\\d|2[0-3]):[0-5]\\d))?$',
              })
              .optional(),
          })
          .meta({ minProperties: 1, maxProperties: 1 } as never),
      ),
    },
    responses: { 200: apiJson('Business time moved', ClockAdvanced), ...writeErrors(403, 409) },
  }),
  listUsers: createRoute({
    method: 'get',
    path: '/simulator/users',
    summary: "The app's test users",
    security: API_SECURITY,
    request: { query: z.strictObject({ app_id: z.string(), limit: limitParam, cursor: cursorParam }) },
    responses: { 200: apiJson('Test users', list(TestUser)), ...apiErrors(403, 404) },
  }),
  getUser: createRoute({
    method: 'get',
    path: '/simulator/users/{user_id}',
    summary: 'A test user',
    security: API_SECURITY,
    request: { params: userPath, query: z.strictObject({ app_id: z.string() }) },
    responses: { 200: apiJson('A test user', TestUser), ...apiErrors(403, 404) },
  }),
  createUser: createRoute({
    method: 'post',
    path: '/simulator/users',
    summary: 'A test user, subscribed by the subscribe transition (a trial or a charge)',
    security: API_SECURITY,
    request: {
      query: NO_QUERY,
      body: json(
        z.strictObject({
          app_id: appId,
          plan: planId,
          trial_days: int(0, 365).optional(),
          payment_behaviour: behaviour.optional(),
          status: z.enum(STATUSES).optional(),
          email: email.optional(),
          name: text(100).optional(),
        }),
      ),
    },
    responses: { 201: apiJson('The new test user', TestUser), ...writeErrors(402, 403, 404, 409) },
  }),
  updateUser: createRoute({
    method: 'patch',
    path: '/simulator/users/{user_id}',
    summary: 'Payment behaviour, a plan change, a forced status (edge cases), in that order',
    security: API_SECURITY,
    request: {
      params: userPath,
      query: NO_QUERY,
      body: json(
        z
          .strictObject({
            app_id: appId,
            plan: planId.optional(),
            payment_behaviour: behaviour.optional(),
            status: z.enum(STATUSES).optional(),
          })
          .meta({ minProperties: 2 } as never),
      ),
    },
    responses: { 200: apiJson('The test user changed', TestUser), ...writeErrors(402, 403, 404, 409) },
  }),
  cancelUser: createRoute({
    method: 'post',
    path: '/simulator/users/{user_id}/cancel',
    summary: "Cancels the test user's subscription",
    security: API_SECURITY,
    request: { params: userPath, query: NO_QUERY, body: appOnly },
    responses: { 200: apiJson('Cancelled', TestUser), ...writeErrors(403, 404, 409) },
  }),
  revokeUser: createRoute({
    method: 'post',
    path: '/simulator/users/{user_id}/revoke',
    summary: 'The user removes the app: every token dies, relay streams close, user.revoked is sent',
    security: API_SECURITY,
    request: { params: userPath, query: NO_QUERY, body: appOnly },
    responses: {
      200: apiJson(
        'Revoked',
        z.strictObject({
          user_id: z.string(),
          app_id: z.string(),
          scopes: z.array(z.enum(SCOPES)),
          tokens_revoked: z.int().min(0),
        }),
      ),
      ...writeErrors(403, 404),
    },
  }),
  events: createRoute({
    method: 'post',
    path: '/simulator/events',
    summary: 'Enacts the event (or, `synthetic`, sends it as given); answered after the first attempt',
    security: API_SECURITY,
    request: {
      query: NO_QUERY,
      body: json(
        z.strictObject({
          app_id: appId,
          event: z.enum(EVENT_NAMES),
          data: z.record(z.string(), z.unknown()).optional(),
          synthetic: z.boolean().optional(),
        }),
      ),
    },
    responses: {
      201: apiJson('The event enacted and its first delivery', EventSent),
      ...writeErrors(402, 403, 404, 409),
    },
  }),
  check: createRoute({
    method: 'post',
    path: '/simulator/entitlement-checks',
    summary: 'The one access rule at business time, with the entitlement it read',
    security: API_SECURITY,
    request: {
      query: NO_QUERY,
      body: json(z.strictObject({ app_id: appId, user_id: userId, feature: text(64) })),
    },
    responses: {
      200: apiJson(
        'The access rule',
        z
          .strictObject({
            allowed: z.boolean(),
            reason: z.enum([
              'feature_in_plan',
              'feature_not_in_plan',
              'status_expired',
              'access_ended',
              'no_entitlement',
            ]),
            message: z.string(),
            over_limit: z.boolean(),
            now: stamp,
            entitlement: orNull(Entitlement),
          })
          .meta({ id: 'EntitlementCheck' }),
      ),
      ...writeErrors(403, 404),
    },
  }),
};
