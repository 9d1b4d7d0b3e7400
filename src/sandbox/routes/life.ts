import { EVENT_NAMES } from '../../wire.js';
import type { ApiContext, ApiResult } from '../core.js';
import { ownedApp, requireTestMode } from '../http/auth.js';
import { readJsonObject } from '../http/body.js';
import { invalidRequest, SandboxApiError } from '../http/errors.js';
import { allowQuery, paginate } from '../http/query.js';
import { bool, int, optional, parseFields, required, str } from '../http/validate.js';
import { apiError } from '../billing/life.js';
import { PAYMENT_BEHAVIOURS, type PaymentBehaviour, type SubStatus } from '../billing/records.js';
import { enactEvent } from '../billing/simulated.js';
import { STATUSES, type AppRecord } from '../storage/records.js';

const appId = str({ max: 64, pattern: /^app_[A-Za-z0-9]+$/ });
const planId = str({ max: 63, pattern: /^[a-z0-9][a-z0-9-]*$/ });
const email = str({ max: 254, pattern: /^[^\s@]+@[^\s@]+\.[^\s@]+$/ });
const behaviour = str({ oneOf: PAYMENT_BEHAVIOURS });
const status = str({ oneOf: STATUSES });

function simulatorApp(ctx: ApiContext, id: string): AppRecord {
  requireTestMode(ctx.principal);
  return ownedApp(ctx, id);
}

/** `app_id` from the query, for the simulator's reads. */
function queryApp(ctx: ApiContext, extra: string[] = []): AppRecord {
  allowQuery(ctx.url, ['app_id', ...extra]);
  const id = ctx.url.searchParams.get('app_id');
  if (id === null) throw invalidRequest('Query parameter "app_id" is required.');
  return simulatorApp(ctx, appId(id, 'app_id'));
}

/** `GET /simulator/clock`. */
export function getClock(ctx: ApiContext): ApiResult {
  allowQuery(ctx.url, []);
  requireTestMode(ctx.principal);
  ctx.core.life.catchUp();
  return { status: 200, body: ctx.core.life.clockView() };
}

/** `POST /simulator/clock {advance_s}` or `{to}`: business time moves; every transition on the way happens. */
export async function advanceClock(ctx: ApiContext): Promise<ApiResult> {
  allowQuery(ctx.url, []);
  requireTestMode(ctx.principal);
  const input = parseFields(await readJsonObject(ctx.req), {
    advance_s: optional(int(1, 100 * 366 * 86_400)),
    to: optional(str({ max: 40 })),
  });
  if ((input.advance_s === undefined) === (input.to === undefined)) {
    throw invalidRequest('Send either "advance_s" (seconds) or "to" (an ISO 8601 time).');
  }
  if (input.to !== undefined && Number.isNaN(Date.parse(input.to))) {
    throw invalidRequest('Field "to" must be an ISO 8601 time.');
  }
  return { status: 200, body: ctx.core.life.advance(input) };
}

/** `GET /simulator/users?app_id=`: the app's test users, oldest first. */
export function listUsers(ctx: ApiContext): ApiResult {
  const app = queryApp(ctx, ['limit', 'cursor']);
  const url = new URL(ctx.url);
  url.searchParams.delete('app_id');
  const view = (id: string) => {
    const user = ctx.core.ledger.user(id);
    return user && ctx.core.life.userView(user, app.id);
  };
  return { status: 200, body: paginate(url, ctx.core.ledger.userIds(app.id), view) };
}

/** `GET /simulator/users/{id}?app_id=`. */
export function getUser(ctx: ApiContext): ApiResult {
  const app = queryApp(ctx);
  ctx.core.life.catchUp();
  const user = ctx.core.life.testUser(app, ctx.params.user_id!);
  return { status: 200, body: ctx.core.life.userView(user, app.id) };
}

/** `POST /simulator/users`: a test user subscribed by the *subscribe* transition. */
export async function createUser(ctx: ApiContext): Promise<ApiResult> {
  allowQuery(ctx.url, []);
  const input = parseFields(await readJsonObject(ctx.req), {
    app_id: required(appId),
    plan: required(planId),
    trial_days: optional(int(0, 365)),
    payment_behaviour: optional(behaviour),
    status: optional(status),
    email: optional(email),
    name: optional(str({ max: 100 })),
  });
  const app = simulatorApp(ctx, input.app_id);
  const { user } = ctx.core.life.createUser(app, {
    ...input,
    payment_behaviour: input.payment_behaviour as PaymentBehaviour | undefined,
    status: input.status as SubStatus | undefined,
  });
  return { status: 201, body: ctx.core.life.userView(user, app.id) };
}

/** `PATCH /simulator/users/{id}`: payment behaviour, a plan change, a forced status. */
export async function updateUser(ctx: ApiContext): Promise<ApiResult> {
  allowQuery(ctx.url, []);
  const input = parseFields(await readJsonObject(ctx.req), {
    app_id: required(appId),
    plan: optional(planId),
    payment_behaviour: optional(behaviour),
    status: optional(status),
  });
  if (input.plan === undefined && input.payment_behaviour === undefined && input.status === undefined) {
    throw invalidRequest('Send "plan", "payment_behaviour" or "status" to change.');
  }
  const app = simulatorApp(ctx, input.app_id);
  const { user } = ctx.core.life.updateUser(app, ctx.params.user_id!, {
    plan: input.plan,
    payment_behaviour: input.payment_behaviour as PaymentBehaviour | undefined,
    status: input.status as SubStatus | undefined,
  });
  return { status: 200, body: ctx.core.life.userView(user, app.id) };
}

async function bodyApp(ctx: ApiContext): Promise<AppRecord> {
  allowQuery(ctx.url, []);
  const input = parseFields(await readJsonObject(ctx.req), { app_id: required(appId) });
  return simulatorApp(ctx, input.app_id);
}

/** `POST /simulator/users/{id}/cancel`. */
export async function cancelUser(ctx: ApiContext): Promise<ApiResult> {
  const app = await bodyApp(ctx);
  const { user } = ctx.core.life.cancelUser(app, ctx.params.user_id!);
  return { status: 200, body: ctx.core.life.userView(user, app.id) };
}

/** `POST /simulator/users/{id}/revoke`: the user removes the app. */
export async function revokeUser(ctx: ApiContext): Promise<ApiResult> {
  const app = await bodyApp(ctx);
  const { user, scopes, tokens } = ctx.core.life.revokeUser(app, ctx.params.user_id!);
  return { status: 200, body: { user_id: user.id, app_id: app.id, scopes, tokens_revoked: tokens } };
}

/** `POST /simulator/events`: enacts the event (or, `synthetic`, sends it as given); answered after the first attempt. */
export async function simulateEvent(ctx: ApiContext): Promise<ApiResult> {
  allowQuery(ctx.url, []);
  const input = parseFields(await readJsonObject(ctx.req), {
    app_id: required(appId),
    event: required(str({ oneOf: EVENT_NAMES })),
    data: optional<unknown>((v) => v),
    synthetic: optional(bool),
  });
  const app = simulatorApp(ctx, input.app_id);
  const raw = input.data ?? {};
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw invalidRequest('Field "data" must be an object.');
  const data = raw as Record<string, unknown>;
  if (input.synthetic) {
    const result = await ctx.core.deliveries.emit(app, input.event, data, { synthetic: true });
    return { status: 201, body: answer(input.event, result, null) };
  }
  let enacted;
  try {
    enacted = enactEvent(ctx.core, ctx.core.life, app, input.event, data);
  } catch (e) {
    throw apiError(e);
  }
  const results = await enacted.sent;
  const mine = results.filter((r) => r.delivery.event === input.event).at(-1) ?? results.at(-1);
  if (!mine) throw new SandboxApiError(500, 'internal_error', 'The transition sent no event.');
  return { status: 201, body: answer(input.event, mine, enacted.transition) };
}

function answer(event: string, r: import('../webhooks/deliveries.js').EmitResult, transition: unknown) {
  return {
    delivery_id: r.delivery.id,
    event,
    envelope: r.envelope,
    webhook: r.webhook,
    listeners: r.listeners,
    transition,
  };
}

/** `POST /simulator/entitlement-checks`: the one access rule at business time. */
export async function checkEntitlement(ctx: ApiContext): Promise<ApiResult> {
  allowQuery(ctx.url, []);
  const input = parseFields(await readJsonObject(ctx.req), {
    app_id: required(appId),
    user_id: required(str({ max: 64, pattern: /^usr_[A-Za-z0-9]+$/ })),
    feature: required(str({ max: 64 })),
  });
  const app = simulatorApp(ctx, input.app_id);
  const user = ctx.core.ledger.user(input.user_id);
  if (!user || (user.app_id !== app.id && user.id !== app.owner_id)) {
    throw new SandboxApiError(404, 'not_found', `No user "${input.user_id}" on app "${app.id}".`);
  }
  ctx.core.life.catchUp();
  return { status: 200, body: ctx.core.life.check(app.id, user.id, input.feature) };
}
