import { Hono } from 'hono';
import { z } from 'zod';
import { EVENT_NAMES } from '../../wire.js';
import { MAX_AHEAD_MS } from '../billing/clock.js';
import { parseBusinessTime } from '../../wire/iso-time.js';
import { apiError } from '../billing/life.js';
import { PAYMENT_BEHAVIOURS } from '../billing/records.js';
import { enactEvent } from '../billing/simulated.js';
import { ownedApp, requireTestMode } from '../http/auth.js';
import type { RouteContext, SandboxEnv } from '../http/env.js';
import { paginate } from '../http/paging.js';
import { invalidRequest, SandboxApiError } from '../http/problem.js';
import { int, jsonBody, noQuery, query, text } from '../http/schemas.js';
import type { EmitResult } from '../webhooks/dispatcher.js';
import { STATUSES, type AppRecord } from '../storage/records.js';

const appId = text(64, /^app_[A-Za-z0-9]+$/);
const userId = text(64, /^usr_[A-Za-z0-9]+$/);
const planId = text(63, /^[a-z0-9][a-z0-9-]*$/);
const email = text(254, /^[^\s@]+@[^\s@]+\.[^\s@]+$/);
const behaviour = z.enum(PAYMENT_BEHAVIOURS as ['succeeds', 'declines', 'declines_renewals']);

/** Checks the caller may use the simulator on app `id` (test mode, its own app). */
function simulatorApp(c: RouteContext, id: string): AppRecord {
  requireTestMode(c.get('principal'));
  return ownedApp({ core: c.get('core'), principal: c.get('principal') }, id);
}

/** Transitions serialized per step: a year's 120,000 (32 MB) never hold the event loop at once. */
const JSON_STEP = 2_000;

/**
 * `head` with `list` under `name`, as JSON text made a step at a time (other requests are answered
 * between steps), the same text as `JSON.stringify({...head, [name]: list})`.
 */
async function jsonWithList(head: object, name: string, list: unknown[]): Promise<string> {
  const parts: string[] = [];
  for (let i = 0; i < list.length; i += JSON_STEP) {
    parts.push(
      list
        .slice(i, i + JSON_STEP)
        .map((item) => JSON.stringify(item))
        .join(','),
    );
    await new Promise((resolve) => setImmediate(resolve));
  }
  return `${JSON.stringify({ ...head, [name]: [] }).slice(0, -2)}${parts.join(',')}]}`;
}

/** What `POST /simulator/events` answers for one delivery. */
function answer(event: string, r: EmitResult, transition: unknown) {
  return {
    delivery_id: r.delivery.id,
    event,
    envelope: r.envelope,
    webhook: r.webhook,
    listeners: r.listeners,
    transition,
  };
}

/**
 * The marketplace's life (docs/DECISIONS.md §5): the business clock, test users over time, enacted
 * events and the one access rule. The rules are in `billing/`; these routes parse and answer.
 */
export const lifeApi = new Hono<SandboxEnv>()
  .get('/simulator/clock', noQuery, (c) => {
    requireTestMode(c.get('principal'));
    c.get('core').life.catchUp();
    return c.json(c.get('core').life.clockView(), 200);
  })
  // Business time moves forward; every transition on the way happens, in order, and is listed. Both
  // inputs are checked before anything is written, against one bound (100 years past real time).
  .post(
    '/simulator/clock',
    noQuery,
    jsonBody(z.strictObject({ advance_s: int(1, MAX_AHEAD_MS / 1000).optional(), to: text(40).optional() })),
    async (c) => {
      requireTestMode(c.get('principal'));
      const input = c.get('body');
      if ((input.advance_s === undefined) === (input.to === undefined)) {
        throw invalidRequest('Send either "advance_s" (seconds) or "to" (an ISO 8601 time).');
      }
      const to = input.to === undefined ? undefined : parseBusinessTime(input.to);
      if (input.to !== undefined && to === undefined) {
        throw invalidRequest(
          'Field "to" must be a real ISO 8601 date or time with a four-digit year, such as 2027-01-31 or 2027-01-31T00:00:00Z.',
        );
      }
      const { transitions, ...clock } = await c.get('core').life.advance({ advance_s: input.advance_s, to });
      return c.body(await jsonWithList(clock, 'transitions', transitions), 200, {
        'content-type': 'application/json',
      });
    },
  )
  .get(
    '/simulator/users',
    query(
      z.strictObject({ app_id: z.string(), limit: z.string().optional(), cursor: z.string().optional() }),
    ),
    (c) => {
      const app = simulatorApp(c, c.get('query').app_id);
      const { ledger, life } = c.get('core');
      life.catchUp();
      const view = (id: string) => {
        const user = ledger.user(id);
        return user && life.userView(user, app.id);
      };
      return c.json(paginate(c.get('query'), ledger.userIds(app.id), view), 200);
    },
  )
  .get('/simulator/users/:user_id', query(z.strictObject({ app_id: z.string() })), (c) => {
    const app = simulatorApp(c, c.get('query').app_id);
    const { life } = c.get('core');
    life.catchUp();
    return c.json(life.userView(life.testUser(app, c.req.param('user_id')), app.id), 200);
  })
  // A test user, subscribed by the *subscribe* transition (a trial or a charge).
  .post(
    '/simulator/users',
    noQuery,
    jsonBody(
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
    (c) => {
      const app = simulatorApp(c, c.get('body').app_id);
      const { user } = c.get('core').life.createUser(app, c.get('body'));
      return c.json(c.get('core').life.userView(user, app.id), 201);
    },
  )
  // Payment behaviour, a plan change, a forced status (edge cases), in that order.
  .patch(
    '/simulator/users/:user_id',
    noQuery,
    jsonBody(
      z.strictObject({
        app_id: appId,
        plan: planId.optional(),
        payment_behaviour: behaviour.optional(),
        status: z.enum(STATUSES).optional(),
      }),
    ),
    (c) => {
      const { app_id, ...change } = c.get('body');
      if (
        change.plan === undefined &&
        change.payment_behaviour === undefined &&
        change.status === undefined
      ) {
        throw invalidRequest('Send "plan", "payment_behaviour" or "status" to change.');
      }
      const app = simulatorApp(c, app_id);
      const { user } = c.get('core').life.updateUser(app, c.req.param('user_id'), change);
      return c.json(c.get('core').life.userView(user, app.id), 200);
    },
  )
  .post('/simulator/users/:user_id/cancel', noQuery, jsonBody(z.strictObject({ app_id: appId })), (c) => {
    const app = simulatorApp(c, c.get('body').app_id);
    const { user } = c.get('core').life.cancelUser(app, c.req.param('user_id'));
    return c.json(c.get('core').life.userView(user, app.id), 200);
  })
  // The user removes the app: every token dies, relay streams close, `user.revoked` is sent.
  .post('/simulator/users/:user_id/revoke', noQuery, jsonBody(z.strictObject({ app_id: appId })), (c) => {
    const app = simulatorApp(c, c.get('body').app_id);
    const { user, scopes, tokens } = c.get('core').life.revokeUser(app, c.req.param('user_id'));
    return c.json({ user_id: user.id, app_id: app.id, scopes, tokens_revoked: tokens }, 200);
  })
  // Enacts the event (or, `synthetic`, sends it as given); answered after the first attempt.
  .post(
    '/simulator/events',
    noQuery,
    jsonBody(
      z.strictObject({
        app_id: appId,
        event: z.enum(EVENT_NAMES),
        data: z.unknown().optional(),
        synthetic: z.boolean().optional(),
      }),
    ),
    async (c) => {
      const input = c.get('body');
      const app = simulatorApp(c, input.app_id);
      const raw = input.data ?? {};
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
        throw invalidRequest('Field "data" must be an object.');
      }
      const data = raw as Record<string, unknown>;
      if (input.synthetic) {
        const result = await c.get('core').deliveries.emit(app, input.event, data, { synthetic: true });
        return c.json(answer(input.event, result, null), 201);
      }
      let enacted;
      try {
        enacted = enactEvent(c.get('core'), c.get('core').life, app, input.event, data);
      } catch (e) {
        throw apiError(e);
      }
      const results = await enacted.sent;
      const mine = results.filter((r) => r.delivery.event === input.event).at(-1);
      if (!mine) throw new SandboxApiError(500, 'internal_error', 'The transition sent no event.');
      return c.json(answer(input.event, mine, enacted.transition), 201);
    },
  )
  // The one access rule at business time, with the entitlement it read.
  .post(
    '/simulator/entitlement-checks',
    noQuery,
    jsonBody(z.strictObject({ app_id: appId, user_id: userId, feature: text(64) })),
    (c) => {
      const input = c.get('body');
      const app = simulatorApp(c, input.app_id);
      const user = c.get('core').ledger.user(input.user_id);
      if (!user || (user.app_id !== app.id && user.id !== app.owner_id)) {
        throw new SandboxApiError(404, 'not_found', `No user "${input.user_id}" on app "${app.id}".`);
      }
      c.get('core').life.catchUp();
      return c.json(c.get('core').life.check(app.id, user.id, input.feature), 200);
    },
  );
