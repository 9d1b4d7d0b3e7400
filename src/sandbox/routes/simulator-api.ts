import { Hono } from 'hono';
import { z } from 'zod';
import { EVENT_NAMES } from '../../wire.js';
import { ownedApp, requireTestMode } from '../http/auth.js';
import type { RouteContext, SandboxEnv } from '../http/env.js';
import { invalidRequest, SandboxApiError } from '../http/problem.js';
import { checkPart, jsonBody, noQuery, text } from '../http/schemas.js';
import { isoStamp } from '../ids.js';
import { addTestUser, entitlementFor, expiryFor, issueTokens, testUserView, userOfApp } from '../model.js';
import { SCOPES, STATUSES, type AppRecord, type PlanRecord, type Scope } from '../storage/records.js';

const userId = text(64, /^usr_[A-Za-z0-9]+$/);
const appId = text(64, /^app_[A-Za-z0-9]+$/);
const planId = text(63, /^[a-z0-9][a-z0-9-]*$/);
const email = text(254, /^[^\s@]+@[^\s@]+\.[^\s@]+$/);
const scopeList = z.array(z.enum(SCOPES)).max(SCOPES.length);
const isoTimestamp = text(40).refine(
  (v) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(v) && !Number.isNaN(Date.parse(v)),
  'must be an ISO 8601 UTC timestamp',
);

/** Checks the caller may use the simulator on app `id` (test mode, its own app). */
function simulatorApp(c: RouteContext, id: string): AppRecord {
  requireTestMode(c.var.principal);
  return ownedApp({ core: c.var.core, principal: c.var.principal }, id);
}

function activePlan(c: RouteContext, app: AppRecord, id: string): PlanRecord {
  const plan = c.var.core.ledger.plan(app.id, id);
  if (!plan) throw new SandboxApiError(404, 'not_found', `No plan "${id}" on app "${app.id}".`);
  if (plan.archived) throw invalidRequest(`Plan "${id}" is archived.`);
  return plan;
}

/** The scopes a third-party app may ask for; the simulator never issues `apps:write` (docs/DECISIONS.md §2). */
export const APP_SCOPES: readonly Scope[] = ['identity:read', 'entitlements:read'];

const eventSchemas = {
  authorization: z.strictObject({ user_id: userId, app_id: appId, scopes: scopeList }),
  created: z.strictObject({ user_id: userId, plan: planId }),
  cancelled: z.strictObject({ user_id: userId, plan: planId, cancelled_at: isoTimestamp }),
};

/** Validates simulated event data against docs/DECISIONS.md §2, filling left-out fields with defaults. */
function eventData(c: RouteContext, app: AppRecord, event: string, raw: unknown): Record<string, unknown> {
  if (raw !== undefined && (raw === null || typeof raw !== 'object' || Array.isArray(raw))) {
    throw invalidRequest('Field "data" must be an object.');
  }
  const { ledger } = c.var.core;
  const data = { ...((raw as Record<string, unknown> | undefined) ?? {}) };
  data.user_id ??= ledger.userIds(app.id)[0] ?? app.owner_id;
  if (event === 'user.authorized' || event === 'user.revoked') {
    data.app_id ??= app.id;
    data.scopes ??= ['identity:read'];
    return checkPart(eventSchemas.authorization, data, 'data');
  }
  data.plan ??= ledger.subscription(app.id, data.user_id as string)?.plan ?? 'pro-monthly';
  if (event === 'subscription.created') return checkPart(eventSchemas.created, data, 'data');
  data.cancelled_at ??= isoStamp(c.var.core.now());
  return checkPart(eventSchemas.cancelled, data, 'data');
}

/** The Integration Simulator: test users, events, authorizations and entitlement checks. */
export const simulatorApi = new Hono<SandboxEnv>()
  // A test user on a plan; a paid plan emits `subscription.created`.
  .post(
    '/simulator/users',
    noQuery,
    jsonBody(
      z.strictObject({
        app_id: appId,
        plan: planId,
        status: z.enum(STATUSES),
        email: email.optional(),
        name: text(100).optional(),
      }),
    ),
    (c) => {
      const input = c.var.body;
      const app = simulatorApp(c, input.app_id);
      const plan = activePlan(c, app, input.plan);
      const { user, subscription } = addTestUser(c.var.core, app, {
        plan,
        status: input.status,
        email: input.email,
        name: input.name,
      });
      return c.json(testUserView(user, subscription), 201);
    },
  )
  // Changes plan or status; `cancelled` emits `subscription.cancelled`, a new paid plan `subscription.created`.
  .patch(
    '/simulator/users/:user_id',
    noQuery,
    jsonBody(z.strictObject({ app_id: appId, status: z.enum(STATUSES).optional(), plan: planId.optional() })),
    (c) => {
      const input = c.var.body;
      if (input.status === undefined && input.plan === undefined) {
        throw invalidRequest('Send "status" or "plan" to change.');
      }
      const app = simulatorApp(c, input.app_id);
      const { ledger, deliveries } = c.var.core;
      const user = ledger.user(c.req.param('user_id'));
      if (!user || user.app_id !== app.id) {
        throw new SandboxApiError(
          404,
          'not_found',
          `No test user "${c.req.param('user_id')}" on app "${app.id}".`,
        );
      }
      const sub = ledger.subscription(app.id, user.id);
      if (!sub) throw new SandboxApiError(404, 'not_found', `Test user "${user.id}" has no subscription.`);
      const now = c.var.core.now();
      const next = { ...sub };
      let created = false;
      if (input.plan !== undefined && input.plan !== sub.plan) {
        const plan = activePlan(c, app, input.plan);
        next.plan = plan.id;
        next.expires_at = expiryFor(plan, input.status ?? sub.status, now);
        created = plan.kind !== 'free';
      }
      const wasCancelled = sub.status === 'cancelled';
      if (input.status !== undefined) next.status = input.status;
      if (next.status === 'cancelled' && !wasCancelled) next.cancelled_at = isoStamp(now);
      if (next.status !== 'cancelled') next.cancelled_at = null;
      ledger.commit({ op: 'sub', v: next });
      if (created)
        deliveries.emitInBackground(app, 'subscription.created', { user_id: user.id, plan: next.plan });
      if (next.status === 'cancelled' && !wasCancelled) {
        deliveries.emitInBackground(app, 'subscription.cancelled', {
          user_id: user.id,
          plan: next.plan,
          cancelled_at: next.cancelled_at,
        });
      }
      return c.json(testUserView(user, next), 200);
    },
  )
  // A signed delivery, answered after the first attempt.
  .post(
    '/simulator/events',
    noQuery,
    jsonBody(z.strictObject({ app_id: appId, event: z.enum(EVENT_NAMES), data: z.unknown().optional() })),
    async (c) => {
      const input = c.var.body;
      const app = simulatorApp(c, input.app_id);
      const data = eventData(c, app, input.event, input.data);
      const result = await c.var.core.deliveries.emit(app, input.event, data);
      return c.json(
        {
          delivery_id: result.delivery.id,
          event: input.event,
          envelope: result.envelope,
          webhook: result.webhook,
          listeners: result.listeners,
        },
        201,
      );
    },
  )
  // A token for a test user without a browser; emits `user.authorized`. Never for the app's owner
  // and never `apps:write`: a test key must not become a developer token.
  .post(
    '/simulator/authorize',
    noQuery,
    jsonBody(z.strictObject({ app_id: appId, user_id: userId, scopes: scopeList.optional() })),
    (c) => {
      const input = c.var.body;
      const app = simulatorApp(c, input.app_id);
      const scopes = [...new Set(input.scopes ?? APP_SCOPES)];
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
      const user = userOfApp(c.var.core, app, input.user_id);
      const tokens = issueTokens(c.var.core, app, user.id, scopes);
      c.var.core.deliveries.emitInBackground(app, 'user.authorized', {
        user_id: user.id,
        app_id: app.id,
        scopes,
      });
      return c.json({ ...tokens, user_id: user.id }, 201);
    },
  )
  // May this user use this feature, and why.
  .post(
    '/simulator/entitlement-checks',
    noQuery,
    jsonBody(z.strictObject({ app_id: appId, user_id: userId, feature: text(64) })),
    (c) => {
      const input = c.var.body;
      const app = simulatorApp(c, input.app_id);
      userOfApp(c.var.core, app, input.user_id);
      const entitlement = entitlementFor(c.var.core, app, input.user_id);
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
      return c.json({ allowed, reason, entitlement }, 200);
    },
  );
