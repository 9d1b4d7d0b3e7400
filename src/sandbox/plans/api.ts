import { Hono } from 'hono';
import { z } from 'zod';
import { routeApp } from '../kernel/http/auth.js';
import type { RouteContext, SandboxEnv } from '../kernel/http/env.js';
import { paginate } from '../kernel/http/paging.js';
import { invalidRequest, SandboxApiError } from '../kernel/http/problem.js';
import { createRoute, openapi } from '../kernel/http/declare.js';
import { API_SECURITY, apiErrors, apiJson, apiNoContent, writeErrors } from '../kernel/http/responses.js';
import { int, LIST_QUERY, NO_QUERY, text } from '../kernel/http/schemas.js';
import { isoStamp } from '../kernel/ids.js';
import { planView } from '../kernel/model.js';
import { list, Plan, planId, recordId } from '../kernel/shapes.js';
import { PLAN_KINDS, type AppRecord, type PlanRecord } from '../kernel/storage/records.js';

const planFields = {
  name: text(100),
  price: z.strictObject({ amount: int(0, 100_000_000), currency: text(3, /^[A-Z]{3}$/) }).nullable(),
  features: z.array(text(64, /^[a-z0-9][a-z0-9_.:-]*$/)).max(100),
  api_call_limit: int(0, 1_000_000_000).nullable(),
  trial_days: int(0, 365),
};

function checkPrice(kind: PlanRecord['kind'], price: PlanRecord['price']): void {
  if (kind === 'free' && price !== null && price.amount !== 0) {
    throw invalidRequest('Field "price" must be null or zero for a free plan.');
  }
  if (kind !== 'free' && price === null)
    throw invalidRequest(`Field "price" is required for a ${kind} plan.`);
}

function checkTrial(kind: PlanRecord['kind'], days: number | undefined): void {
  if (days !== undefined && days > 0 && kind !== 'monthly' && kind !== 'annual')
    throw invalidRequest(`Field "trial_days" applies to monthly and annual plans, not to a ${kind} plan.`);
}

function routePlan(c: RouteContext, app: AppRecord): PlanRecord {
  const plan = c.get('core').ledger.plan(app.id, c.req.param('plan_id')!);
  if (!plan) {
    throw new SandboxApiError(404, 'not_found', `No plan "${c.req.param('plan_id')}" on app "${app.id}".`);
  }
  return plan;
}

const appPath = z.strictObject({ app_id: recordId('app') });
/** A free plan has no price (or zero) and no trial; a paid one has a price; trials are monthly or annual. */
const PRICE_BY_KIND = [
  {
    properties: {
      kind: { const: 'free' },
      price: { anyOf: [{ type: 'null' }, { type: 'object', properties: { amount: { const: 0 } } }] },
      trial_days: { const: 0 },
    },
    required: ['kind'],
  },
  { properties: { kind: { const: 'one_time' }, trial_days: { const: 0 } }, required: ['kind', 'price'] },
  { properties: { kind: { enum: ['monthly', 'annual'] } }, required: ['kind', 'price'] },
];
const planPath = z.strictObject({ app_id: recordId('app'), plan_id: planId });
const json = <S extends z.ZodType>(schema: S) => ({
  required: true,
  content: { 'application/json': { schema } },
});

const routes = {
  list: createRoute({
    method: 'get',
    path: '/apps/{app_id}/plans',
    summary: "The app's plans",
    security: API_SECURITY,
    request: { params: appPath, query: LIST_QUERY },
    responses: { 200: apiJson('Plans', list(Plan)), ...apiErrors(403, 404) },
  }),
  create: createRoute({
    method: 'post',
    path: '/apps/{app_id}/plans',
    summary: 'Creates a plan (409 when the id is taken)',
    security: API_SECURITY,
    request: {
      params: appPath,
      query: NO_QUERY,
      body: json(
        z
          .strictObject({
            id: text(63, /^[a-z0-9][a-z0-9-]*$/),
            name: planFields.name,
            kind: z.enum(PLAN_KINDS),
            price: planFields.price.optional(),
            features: planFields.features.optional(),
            api_call_limit: planFields.api_call_limit.optional(),
            trial_days: planFields.trial_days.optional(),
          })
          // The rules checkPrice and checkTrial enforce, for the document.
          .meta({ oneOf: PRICE_BY_KIND } as never),
      ),
    },
    responses: { 201: apiJson('The new plan', Plan), ...writeErrors(403, 404, 409) },
  }),
  get: createRoute({
    method: 'get',
    path: '/apps/{app_id}/plans/{plan_id}',
    summary: 'A plan',
    security: API_SECURITY,
    request: { params: planPath, query: NO_QUERY },
    responses: { 200: apiJson('A plan', Plan), ...apiErrors(403, 404) },
  }),
  update: createRoute({
    method: 'patch',
    path: '/apps/{app_id}/plans/{plan_id}',
    summary: 'Changes everything but `id` and `kind` (at least one field)',
    security: API_SECURITY,
    request: {
      params: planPath,
      query: NO_QUERY,
      body: json(
        z
          .strictObject({
            name: planFields.name.optional(),
            price: planFields.price.optional(),
            features: planFields.features.optional(),
            api_call_limit: planFields.api_call_limit.optional(),
            trial_days: planFields.trial_days.optional(),
            archived: z.boolean().optional(),
          })
          .meta({ minProperties: 1 } as never),
      ),
    },
    responses: { 200: apiJson('The plan changed', Plan), ...writeErrors(403, 404) },
  }),
  remove: createRoute({
    method: 'delete',
    path: '/apps/{app_id}/plans/{plan_id}',
    summary: 'Deletes the plan (204), or archives it when it has subscribers (200)',
    security: API_SECURITY,
    request: { params: planPath, query: NO_QUERY },
    responses: {
      200: apiJson('Archived (it has subscribers)', Plan),
      204: apiNoContent('Deleted'),
      ...apiErrors(403, 404, 507),
    },
  }),
};

/** An app's pricing plans. */
export const plansApi = new Hono<SandboxEnv>();

openapi(plansApi, routes.list, (c) => {
  const app = routeApp(c);
  const view = (id: string) => {
    const plan = c.get('core').ledger.plan(app.id, id);
    return plan && planView(c.get('core'), plan);
  };
  return c.json(paginate(c.get('query'), c.get('core').ledger.planIds(app.id), view), 200);
});

openapi(plansApi, routes.create, (c) => {
  const app = routeApp(c);
  const input = c.get('body');
  if (c.get('core').ledger.plan(app.id, input.id)) {
    throw new SandboxApiError(409, 'conflict', `App "${app.id}" already has a plan "${input.id}".`);
  }
  const price = input.price ?? null;
  checkPrice(input.kind, price);
  checkTrial(input.kind, input.trial_days);
  const plan: PlanRecord = {
    id: input.id,
    app_id: app.id,
    name: input.name,
    kind: input.kind,
    price,
    features: input.features ?? [],
    api_call_limit: input.api_call_limit ?? null,
    trial_days: input.trial_days ?? 0,
    archived: false,
    created_at: isoStamp(c.get('core').now()),
  };
  c.get('core').ledger.commit({ op: 'plan', v: plan });
  return c.json(planView(c.get('core'), plan), 201);
});

openapi(plansApi, routes.get, (c) => c.json(planView(c.get('core'), routePlan(c, routeApp(c))), 200));

openapi(plansApi, routes.update, (c) => {
  const plan = routePlan(c, routeApp(c));
  const input = c.get('body');
  if (Object.keys(input).length === 0) throw invalidRequest('Send at least one field to change.');
  if (input.price !== undefined) checkPrice(plan.kind, input.price);
  checkTrial(plan.kind, input.trial_days);
  const next: PlanRecord = { ...plan };
  if (input.name !== undefined) next.name = input.name;
  if (input.price !== undefined) next.price = input.price;
  if (input.features !== undefined) next.features = input.features;
  if (input.api_call_limit !== undefined) next.api_call_limit = input.api_call_limit;
  if (input.trial_days !== undefined) next.trial_days = input.trial_days;
  if (input.archived !== undefined) next.archived = input.archived;
  c.get('core').ledger.commit({ op: 'plan', v: next });
  return c.json(planView(c.get('core'), next), 200);
});

openapi(plansApi, routes.remove, (c) => {
  const plan = routePlan(c, routeApp(c));
  const { ledger } = c.get('core');
  if (ledger.subscriberCount(plan.app_id, plan.id) > 0) {
    const archived = { ...plan, archived: true };
    ledger.commit({ op: 'plan', v: archived });
    return c.json(planView(c.get('core'), archived), 200);
  }
  ledger.commit({ op: 'plan-', app_id: plan.app_id, id: plan.id });
  return c.body(null, 204);
});
