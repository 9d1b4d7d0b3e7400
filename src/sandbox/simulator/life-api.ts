import { Hono } from 'hono';
import type { TypedResponse } from 'hono';
import type { z } from 'zod';
import { parseBusinessTime } from '../../wire/iso-time.js';
import { apiError, Life } from '../billing/life.js';
import { enactEvent } from './simulated.js';
import { ownedApp, requireTestMode } from '../kernel/http/auth.js';
import { openapi } from '../kernel/http/declare.js';
import type { RouteContext, SandboxEnv } from '../kernel/http/env.js';
import { paginate } from '../kernel/http/paging.js';
import { invalidRequest, SandboxApiError } from '../kernel/http/problem.js';
import type { EmitResult } from '../kernel/deliveries/dispatcher.js';
import type { AppRecord } from '../kernel/storage/records.js';
import type { Transition } from '../billing/records.js';
import { type ClockAdvanced, lifeRoutes as routes } from './life-routes.js';

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
async function jsonWithList<H extends object, N extends string, T>(
  head: H,
  name: N,
  list: T[],
): Promise<TypedResponse<H & Record<N, T[]>, 200, 'json'>> {
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
  const text = `${JSON.stringify({ ...head, [name]: [] }).slice(0, -2)}${parts.join(',')}]}`;
  // The answer's type is the value's whose text this is (checked against the declaration).
  return new Response(text, {
    status: 200,
    headers: { 'content-type': 'application/json' },
  }) as unknown as TypedResponse<H & Record<N, T[]>, 200, 'json'>;
}

/** What `POST /simulator/events` answers for one delivery. */
function answer<E extends string>(event: E, r: EmitResult, transition: Transition | null) {
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
export const lifeApi = new Hono<SandboxEnv>();

openapi(lifeApi, routes.clock, (c) => {
  requireTestMode(c.get('principal'));
  c.get('core').services.get(Life).catchUp();
  return c.json(c.get('core').services.get(Life).clockView(), 200);
});

// Business time moves forward; every transition on the way happens, in order, and is listed. Both
// inputs are checked before anything is written, against one bound (100 years past real time).
openapi(lifeApi, routes.advance, async (c) => {
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
  const { transitions, ...clock } = await c
    .get('core')
    .services.get(Life)
    .advance({ advance_s: input.advance_s, to });
  const answer: TypedResponse<z.output<typeof ClockAdvanced>, 200, 'json'> = await jsonWithList(
    clock,
    'transitions',
    transitions,
  );
  return answer;
});

openapi(lifeApi, routes.listUsers, (c) => {
  const app = simulatorApp(c, c.get('query').app_id);
  const { ledger, services } = c.get('core');
  const life = services.get(Life);
  life.catchUp();
  const view = (id: string) => {
    const user = ledger.user(id);
    return user && life.userView(user, app.id);
  };
  return c.json(paginate(c.get('query'), ledger.userIds(app.id), view), 200);
});

openapi(lifeApi, routes.getUser, (c) => {
  const app = simulatorApp(c, c.get('query').app_id);
  const life = c.get('core').services.get(Life);
  life.catchUp();
  return c.json(life.userView(life.testUser(app, c.req.param('user_id')), app.id), 200);
});

openapi(lifeApi, routes.createUser, (c) => {
  const app = simulatorApp(c, c.get('body').app_id);
  const { user } = c.get('core').services.get(Life).createUser(app, c.get('body'));
  return c.json(c.get('core').services.get(Life).userView(user, app.id), 201);
});

openapi(lifeApi, routes.updateUser, (c) => {
  const { app_id, ...change } = c.get('body');
  if (change.plan === undefined && change.payment_behaviour === undefined && change.status === undefined) {
    throw invalidRequest('Send "plan", "payment_behaviour" or "status" to change.');
  }
  const app = simulatorApp(c, app_id);
  const { user } = c.get('core').services.get(Life).updateUser(app, c.req.param('user_id'), change);
  return c.json(c.get('core').services.get(Life).userView(user, app.id), 200);
});

openapi(lifeApi, routes.cancelUser, (c) => {
  const app = simulatorApp(c, c.get('body').app_id);
  const { user } = c.get('core').services.get(Life).cancelUser(app, c.req.param('user_id'));
  return c.json(c.get('core').services.get(Life).userView(user, app.id), 200);
});

openapi(lifeApi, routes.revokeUser, (c) => {
  const app = simulatorApp(c, c.get('body').app_id);
  const { user, scopes, tokens } = c.get('core').services.get(Life).revokeUser(app, c.req.param('user_id'));
  return c.json({ user_id: user.id, app_id: app.id, scopes, tokens_revoked: tokens }, 200);
});

openapi(lifeApi, routes.events, async (c) => {
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
    enacted = enactEvent(c.get('core'), c.get('core').services.get(Life), app, input.event, data);
  } catch (e) {
    throw apiError(e);
  }
  const results = await enacted.sent;
  const mine = results.filter((r) => r.delivery.event === input.event).at(-1);
  if (!mine) throw new SandboxApiError(500, 'internal_error', 'The transition sent no event.');
  return c.json(answer(input.event, mine, enacted.transition), 201);
});

openapi(lifeApi, routes.check, (c) => {
  const input = c.get('body');
  const app = simulatorApp(c, input.app_id);
  const user = c.get('core').ledger.user(input.user_id);
  if (!user || (user.app_id !== app.id && user.id !== app.owner_id)) {
    throw new SandboxApiError(404, 'not_found', `No user "${input.user_id}" on app "${app.id}".`);
  }
  c.get('core').services.get(Life).catchUp();
  return c.json(c.get('core').services.get(Life).check(app.id, user.id, input.feature), 200);
});
