import { EVENT_NAMES } from '../../wire.js';
import type { ApiContext, ApiResult } from '../core.js';
import { ownedApp, requireTestMode } from '../http/auth.js';
import { readJsonObject } from '../http/body.js';
import { invalidRequest, SandboxApiError } from '../http/errors.js';
import { allowQuery } from '../http/query.js';
import { arrayOf, optional, parseFields, required, str, type Check } from '../http/validate.js';
import { isoTime } from '../ids.js';
import { createTestUser, entitlementFor, expiryFor, issueTokens, testUserView, userOfApp } from '../model.js';
import {
  SCOPES,
  STATUSES,
  type AppRecord,
  type PlanRecord,
  type Scope,
  type Status,
} from '../storage/records.js';

const userId = str({ max: 64, pattern: /^usr_[A-Za-z0-9]+$/ });
const appId = str({ max: 64, pattern: /^app_[A-Za-z0-9]+$/ });
const planId = str({ max: 63, pattern: /^[a-z0-9][a-z0-9-]*$/ });
const status = str({ oneOf: STATUSES });
const email = str({ max: 254, pattern: /^[^\s@]+@[^\s@]+\.[^\s@]+$/ });
const scopeList = arrayOf(str({ oneOf: SCOPES }), SCOPES.length);
const isoTimestamp: Check<string> = (value, field) => {
  const text = str({ max: 40 })(value, field);
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(text) || Number.isNaN(Date.parse(text))) {
    throw invalidRequest(`Field "${field}" must be an ISO 8601 UTC timestamp.`);
  }
  return text;
};

/** Reads `app_id` from the body and checks the caller may use the simulator on it. */
function simulatorApp(ctx: ApiContext, id: string): AppRecord {
  requireTestMode(ctx.principal);
  return ownedApp(ctx, id);
}

function activePlan(ctx: ApiContext, app: AppRecord, id: string): PlanRecord {
  const plan = ctx.core.ledger.plan(app.id, id);
  if (!plan) throw new SandboxApiError(404, 'not_found', `No plan "${id}" on app "${app.id}".`);
  if (plan.archived) throw invalidRequest(`Plan "${id}" is archived.`);
  return plan;
}

/** `POST /simulator/users`: a test user on a plan; a paid plan emits `subscription.created`. */
export async function createSimulatorUser(ctx: ApiContext): Promise<ApiResult> {
  allowQuery(ctx.url, []);
  const input = parseFields(await readJsonObject(ctx.req), {
    app_id: required(appId),
    plan: required(planId),
    status: required(status),
    email: optional(email),
    name: optional(str({ max: 100 })),
  });
  const app = simulatorApp(ctx, input.app_id);
  const plan = activePlan(ctx, app, input.plan);
  const { user, subscription } = createTestUser(ctx.core, app, {
    plan,
    status: input.status as Status,
    email: input.email,
    name: input.name,
  });
  return { status: 201, body: testUserView(user, subscription) };
}

/** `PATCH /simulator/users/{id}`: change plan or status; `cancelled` emits `subscription.cancelled`. */
export async function updateSimulatorUser(ctx: ApiContext): Promise<ApiResult> {
  allowQuery(ctx.url, []);
  const input = parseFields(await readJsonObject(ctx.req), {
    app_id: required(appId),
    status: optional(status),
    plan: optional(planId),
  });
  if (input.status === undefined && input.plan === undefined) {
    throw invalidRequest('Send "status" or "plan" to change.');
  }
  const app = simulatorApp(ctx, input.app_id);
  const user = ctx.core.ledger.user(ctx.params.user_id!);
  if (!user || user.app_id !== app.id) {
    throw new SandboxApiError(404, 'not_found', `No test user "${ctx.params.user_id}" on app "${app.id}".`);
  }
  const sub = ctx.core.ledger.subscription(app.id, user.id);
  if (!sub) throw new SandboxApiError(404, 'not_found', `Test user "${user.id}" has no subscription.`);
  const now = ctx.core.now();
  const next = { ...sub };
  let created = false;
  if (input.plan !== undefined && input.plan !== sub.plan) {
    const plan = activePlan(ctx, app, input.plan);
    next.plan = plan.id;
    next.expires_at = expiryFor(plan, (input.status as Status | undefined) ?? sub.status, now);
    created = plan.kind !== 'free';
  }
  const wasCancelled = sub.status === 'cancelled';
  if (input.status !== undefined) next.status = input.status as Status;
  if (next.status === 'cancelled' && !wasCancelled) next.cancelled_at = isoTime(now);
  if (next.status !== 'cancelled') next.cancelled_at = null;
  ctx.core.ledger.commit({ op: 'sub', v: next });
  if (created) {
    ctx.core.deliveries.emitInBackground(app, 'subscription.created', { user_id: user.id, plan: next.plan });
  }
  if (next.status === 'cancelled' && !wasCancelled) {
    ctx.core.deliveries.emitInBackground(app, 'subscription.cancelled', {
      user_id: user.id,
      plan: next.plan,
      cancelled_at: next.cancelled_at,
    });
  }
  return { status: 200, body: testUserView(user, next) };
}

function defaultUserId(ctx: ApiContext, app: AppRecord): string {
  return ctx.core.ledger.userIds(app.id)?.[0] ?? app.owner_id;
}

/** Validates simulated event data against docs/DECISIONS.md §2, filling left-out fields with defaults. */
function eventData(ctx: ApiContext, app: AppRecord, event: string, raw: unknown): Record<string, unknown> {
  if (raw !== undefined && (raw === null || typeof raw !== 'object' || Array.isArray(raw))) {
    throw invalidRequest('Field "data" must be an object.');
  }
  const data = { ...((raw as Record<string, unknown> | undefined) ?? {}) };
  data.user_id ??= defaultUserId(ctx, app);
  const prefixed = (spec: Parameters<typeof parseFields>[1]) => {
    try {
      return parseFields(data, spec);
    } catch (error) {
      if (error instanceof Error) error.message = `In "data": ${error.message}`;
      throw error;
    }
  };
  if (event === 'user.authorized' || event === 'user.revoked') {
    data.app_id ??= app.id;
    data.scopes ??= ['identity:read'];
    return prefixed({ user_id: required(userId), app_id: required(appId), scopes: required(scopeList) });
  }
  data.plan ??= ctx.core.ledger.subscription(app.id, data.user_id as string)?.plan ?? 'pro-monthly';
  if (event === 'subscription.created')
    return prefixed({ user_id: required(userId), plan: required(planId) });
  data.cancelled_at ??= isoTime(ctx.core.now());
  return prefixed({
    user_id: required(userId),
    plan: required(planId),
    cancelled_at: required(isoTimestamp),
  });
}

/** `POST /simulator/events`: a signed delivery, answered after the first attempt. */
export async function simulateEvent(ctx: ApiContext): Promise<ApiResult> {
  allowQuery(ctx.url, []);
  const body = await readJsonObject(ctx.req);
  const input = parseFields(body, {
    app_id: required(appId),
    event: required(str({ oneOf: EVENT_NAMES })),
    data: optional<unknown>((v) => v),
  });
  const app = simulatorApp(ctx, input.app_id);
  const data = eventData(ctx, app, input.event, input.data);
  const result = await ctx.core.deliveries.emit(app, input.event, data);
  return {
    status: 201,
    body: {
      delivery_id: result.delivery.id,
      event: input.event,
      envelope: result.envelope,
      webhook: result.webhook,
      listeners: result.listeners,
    },
  };
}

/** The scopes a third-party app may ask for; the simulator never issues `apps:write` (docs/DECISIONS.md §2). */
const APP_SCOPES: readonly Scope[] = ['identity:read', 'entitlements:read'];

/**
 * `POST /simulator/authorize`: a token for a test user without a browser; emits `user.authorized`.
 * Never for the app's owner and never `apps:write`: a test key must not become a developer token.
 */
export async function simulateAuthorize(ctx: ApiContext): Promise<ApiResult> {
  allowQuery(ctx.url, []);
  const input = parseFields(await readJsonObject(ctx.req), {
    app_id: required(appId),
    user_id: required(userId),
    scopes: optional(scopeList),
  });
  const app = simulatorApp(ctx, input.app_id);
  const scopes = [...new Set(input.scopes ?? APP_SCOPES)] as Scope[];
  if (scopes.length === 0) throw invalidRequest('Field "scopes" must not be empty.');
  const developerOnly = scopes.find((s) => !APP_SCOPES.includes(s));
  if (developerOnly !== undefined) {
    throw new SandboxApiError(
      403,
      'forbidden',
      `The simulator issues only ${APP_SCOPES.join(' and ')}, never "${developerOnly}"; sign in as the developer instead: mkt login --scope apps:write`,
    );
  }
  if (input.user_id === app.owner_id) {
    throw new SandboxApiError(
      403,
      'forbidden',
      "The simulator authorizes test users only, not the app's developer; sign in as the developer with: mkt login",
    );
  }
  const user = userOfApp(ctx.core, app, input.user_id);
  const tokens = issueTokens(ctx.core, app, user.id, scopes);
  ctx.core.deliveries.emitInBackground(app, 'user.authorized', { user_id: user.id, app_id: app.id, scopes });
  return { status: 201, body: { ...tokens, user_id: user.id } };
}

/** `POST /simulator/entitlement-checks`: may this user use this feature, and why. */
export async function checkEntitlement(ctx: ApiContext): Promise<ApiResult> {
  allowQuery(ctx.url, []);
  const input = parseFields(await readJsonObject(ctx.req), {
    app_id: required(appId),
    user_id: required(userId),
    feature: required(str({ max: 64 })),
  });
  const app = simulatorApp(ctx, input.app_id);
  userOfApp(ctx.core, app, input.user_id);
  const entitlement = entitlementFor(ctx.core, app, input.user_id);
  let allowed = false;
  let reason: string;
  if (entitlement === null) reason = 'no_entitlement';
  else if (entitlement.status !== 'active' && entitlement.status !== 'trialing') {
    reason = `status_${entitlement.status}`;
  } else if (!entitlement.features.includes(input.feature)) reason = 'feature_not_in_plan';
  else {
    allowed = true;
    reason = 'feature_in_plan';
  }
  return { status: 200, body: { allowed, reason, entitlement } };
}
