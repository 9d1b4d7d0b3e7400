import type { ApiContext, ApiResult } from '../core.js';
import { ownedApp } from '../http/auth.js';
import { readJsonObject } from '../http/body.js';
import { invalidRequest, SandboxApiError } from '../http/errors.js';
import { allowQuery, paginate } from '../http/query.js';
import {
  arrayOf,
  bool,
  int,
  nullable,
  objectOf,
  optional,
  parseFields,
  required,
  str,
} from '../http/validate.js';
import { isoTime } from '../ids.js';
import { planView } from '../model.js';
import { PLAN_KINDS, type AppRecord, type PlanRecord } from '../storage/records.js';

const planFields = {
  name: str({ max: 100 }),
  price: nullable(
    objectOf({
      amount: required(int(0, 100_000_000)),
      currency: required(str({ pattern: /^[A-Z]{3}$/, max: 3 })),
    }),
  ),
  features: arrayOf(str({ max: 64, pattern: /^[a-z0-9][a-z0-9_.:-]*$/ }), 100),
  api_call_limit: nullable(int(0, 1_000_000_000)),
};

function checkPrice(kind: PlanRecord['kind'], price: PlanRecord['price']): void {
  if (kind === 'free' && price !== null && price.amount !== 0) {
    throw invalidRequest('Field "price" must be null or zero for a free plan.');
  }
  if (kind !== 'free' && price === null)
    throw invalidRequest(`Field "price" is required for a ${kind} plan.`);
}

function findPlan(ctx: ApiContext, app: AppRecord): PlanRecord {
  const plan = ctx.core.ledger.plan(app.id, ctx.params.plan_id!);
  if (!plan) {
    throw new SandboxApiError(404, 'not_found', `No plan "${ctx.params.plan_id}" on app "${app.id}".`);
  }
  return plan;
}

/** `GET /apps/{id}/plans`. */
export function listPlans(ctx: ApiContext): ApiResult {
  const app = ownedApp(ctx, ctx.params.app_id!);
  const ids = ctx.core.ledger.planIds(app.id) ?? [];
  const view = (id: string) => {
    const plan = ctx.core.ledger.plan(app.id, id);
    return plan && planView(ctx.core, plan);
  };
  return { status: 200, body: paginate(ctx.url, ids, view) };
}

/** `POST /apps/{id}/plans`: 409 when the id is taken. */
export async function createPlan(ctx: ApiContext): Promise<ApiResult> {
  allowQuery(ctx.url, []);
  const app = ownedApp(ctx, ctx.params.app_id!);
  const input = parseFields(await readJsonObject(ctx.req), {
    id: required(str({ max: 63, pattern: /^[a-z0-9][a-z0-9-]*$/ })),
    name: required(planFields.name),
    kind: required(str({ oneOf: PLAN_KINDS })),
    price: optional(planFields.price),
    features: optional(planFields.features),
    api_call_limit: optional(planFields.api_call_limit),
  });
  if (ctx.core.ledger.plan(app.id, input.id)) {
    throw new SandboxApiError(409, 'conflict', `App "${app.id}" already has a plan "${input.id}".`);
  }
  const kind = input.kind as PlanRecord['kind'];
  const price = input.price ?? null;
  checkPrice(kind, price);
  const plan: PlanRecord = {
    id: input.id,
    app_id: app.id,
    name: input.name,
    kind,
    price,
    features: input.features ?? [],
    api_call_limit: input.api_call_limit ?? null,
    archived: false,
    created_at: isoTime(ctx.core.now()),
  };
  ctx.core.ledger.commit({ op: 'plan', v: plan });
  return { status: 201, body: planView(ctx.core, plan) };
}

/** `GET /apps/{id}/plans/{plan_id}`. */
export function getPlan(ctx: ApiContext): ApiResult {
  allowQuery(ctx.url, []);
  return { status: 200, body: planView(ctx.core, findPlan(ctx, ownedApp(ctx, ctx.params.app_id!))) };
}

/** `PATCH /apps/{id}/plans/{plan_id}`: everything but `id` and `kind`. */
export async function updatePlan(ctx: ApiContext): Promise<ApiResult> {
  allowQuery(ctx.url, []);
  const plan = findPlan(ctx, ownedApp(ctx, ctx.params.app_id!));
  const body = await readJsonObject(ctx.req);
  if ('kind' in body || 'id' in body) throw invalidRequest('The fields "id" and "kind" cannot be changed.');
  const input = parseFields(body, {
    name: optional(planFields.name),
    price: optional(planFields.price),
    features: optional(planFields.features),
    api_call_limit: optional(planFields.api_call_limit),
    archived: optional(bool),
  });
  if (Object.keys(input).length === 0) throw invalidRequest('Send at least one field to change.');
  if (input.price !== undefined) checkPrice(plan.kind, input.price);
  const next: PlanRecord = { ...plan };
  if (input.name !== undefined) next.name = input.name;
  if (input.price !== undefined) next.price = input.price;
  if (input.features !== undefined) next.features = input.features;
  if (input.api_call_limit !== undefined) next.api_call_limit = input.api_call_limit;
  if (input.archived !== undefined) next.archived = input.archived;
  ctx.core.ledger.commit({ op: 'plan', v: next });
  return { status: 200, body: planView(ctx.core, next) };
}

/** `DELETE /apps/{id}/plans/{plan_id}`: 204, or 200 with the plan archived when it has subscribers. */
export function deletePlan(ctx: ApiContext): ApiResult {
  allowQuery(ctx.url, []);
  const plan = findPlan(ctx, ownedApp(ctx, ctx.params.app_id!));
  if (ctx.core.ledger.subscriberCount(plan.app_id, plan.id) > 0) {
    const archived = { ...plan, archived: true };
    ctx.core.ledger.commit({ op: 'plan', v: archived });
    return { status: 200, body: planView(ctx.core, archived) };
  }
  ctx.core.ledger.commit({ op: 'plan-', app_id: plan.app_id, id: plan.id });
  return { status: 204 };
}
