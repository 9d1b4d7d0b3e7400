import type { Deps } from '../deps.js';
import { UsageError } from '../errors.js';
import { parseMoney, type Money } from './money.js';
import { resolveAppId } from '../apps/resolve.js';
import { confirmAction } from '../platform/prompts.js';

/** A pricing plan as the API answers it (unknown extra fields are kept). */
export interface Plan {
  id: string;
  app_id?: string;
  name: string;
  kind: string;
  price: Money | null;
  features: string[];
  api_call_limit: number | null;
  /** A new subscriber's free trial in days; a server may leave it out. */
  trial_days?: number;
  archived: boolean;
  subscribers?: number;
  [field: string]: unknown;
}

/** Plan kinds as users type them, and as the wire spells them. */
const PLAN_KINDS = {
  free: 'free',
  monthly: 'monthly',
  annual: 'annual',
  'one-time': 'one_time',
} as const;

/** The flags of `plans create` / `plans update`, unchecked. */
export interface PlanFlags {
  id?: string;
  name?: string;
  kind?: string;
  price?: string;
  currency?: string;
  feature?: string[];
  'api-call-limit'?: string;
  'trial-days'?: number;
  archived?: boolean;
}

type PlanDeps = Pick<Deps, 'api' | 'config' | 'profile' | 'session'>;

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
const SLUG_RULE = 'lowercase letters, digits and "-", starting with a letter or digit, at most 63 characters';

const plansPath = (app: string) => `/apps/${encodeURIComponent(app)}/plans`;
const planPath = (app: string, id: string) => `${plansPath(app)}/${encodeURIComponent(id)}`;

/** A plan id from a name: "Pro Monthly" → "pro-monthly" (accents dropped, other characters become "-"). */
export function slugify(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
}

/** Checks a plan id (slug); a UsageError saying what is accepted otherwise. */
function checkPlanId(id: string): string {
  if (!SLUG.test(id)) {
    throw new UsageError(`"${id}" is not a plan id: use ${SLUG_RULE} (for example pro-monthly).`, {
      code: 'invalid_plan_id',
    });
  }
  return id;
}

/** The wire kind for a kind as typed (`one-time` → `one_time`). */
function parseKind(kind: string): string {
  const wire = PLAN_KINDS[kind.toLowerCase().replace('_', '-') as keyof typeof PLAN_KINDS];
  if (!wire) {
    throw new UsageError(`Unknown plan kind "${kind}"; use one of: ${Object.keys(PLAN_KINDS).join(', ')}.`, {
      code: 'invalid_kind',
    });
  }
  return wire;
}

/** `--api-call-limit`: a whole number of calls, or "none" for no limit. */
function parseLimit(value: string): number | null {
  if (value === 'none' || value === 'unlimited') return null;
  if (!/^\d{1,10}$/.test(value)) {
    throw new UsageError(
      `Invalid --api-call-limit "${value}": expected a whole number of calls (such as 10000) or "none".`,
      { code: 'invalid_api_call_limit' },
    );
  }
  return Number(value);
}

function checkFeatures(features: string[]): string[] {
  for (const f of features) {
    if (!f.trim() || /\s/.test(f)) {
      throw new UsageError(`Invalid --feature "${f}": a feature is one word, such as export or api.access.`, {
        code: 'invalid_feature',
      });
    }
  }
  return features;
}

/** The body fields shared by create and update. */
function commonFields(flags: PlanFlags, update = false): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (flags.name !== undefined) {
    if (!flags.name.trim()) throw new UsageError('--name must not be empty.', { code: 'invalid_name' });
    out.name = flags.name.trim();
  }
  if (update && flags.price !== undefined && flags.currency === undefined) {
    // In the plan's own currency, read when the request is made (updatePlan).
    out.price = { amount: flags.price, currency: undefined };
  } else if (flags.price !== undefined || flags.currency !== undefined) {
    if (flags.price === undefined || flags.currency === undefined) {
      throw new UsageError('--price and --currency go together, for example --price 9.99 --currency USD.', {
        code: 'invalid_price',
      });
    }
    out.price = parseMoney(flags.price, flags.currency);
  }
  if (flags.feature !== undefined) out.features = checkFeatures(flags.feature);
  if (flags['api-call-limit'] !== undefined) out.api_call_limit = parseLimit(flags['api-call-limit']);
  if (flags['trial-days'] !== undefined) out.trial_days = flags['trial-days'];
  return out;
}

/** Checks `plans create` flags and builds the request body, before any request is made. */
export function planCreateBody(flags: PlanFlags): Record<string, unknown> {
  if (!flags.name?.trim()) throw new UsageError('--name is required.', { code: 'invalid_name' });
  if (flags.kind === undefined) {
    throw new UsageError(`--kind is required: one of ${Object.keys(PLAN_KINDS).join(', ')}.`, {
      code: 'invalid_kind',
    });
  }
  const kind = parseKind(flags.kind);
  let id: string;
  if (flags.id !== undefined) id = checkPlanId(flags.id);
  else {
    id = slugify(flags.name);
    if (!SLUG.test(id)) {
      throw new UsageError(`Cannot make a plan id from the name "${flags.name}"; pass --id (${SLUG_RULE}).`, {
        code: 'invalid_plan_id',
      });
    }
  }
  const fields = commonFields(flags);
  if (kind === 'free' && fields.price !== undefined) {
    throw new UsageError(
      'A free plan has no price; leave out --price and --currency, or pick a paid --kind.',
      {
        code: 'invalid_price',
      },
    );
  }
  if (kind !== 'free' && fields.price === undefined) {
    throw new UsageError(
      `A ${flags.kind} plan needs a price: add --price AMOUNT --currency CODE (such as --price 9.99 --currency USD).`,
      {
        code: 'price_required',
      },
    );
  }
  if (Number(fields.trial_days ?? 0) > 0 && kind !== 'monthly' && kind !== 'annual') {
    throw new UsageError(`A ${flags.kind} plan has no trial: --trial-days is for monthly and annual plans.`, {
      code: 'invalid_trial_days',
    });
  }
  return { id, name: fields.name, kind, ...fields, ...(kind === 'free' ? { price: null } : {}) };
}

/** Checks `plans update` flags and builds the PATCH body; kind and id cannot change. */
export function planUpdateBody(flags: PlanFlags): Record<string, unknown> {
  const fields = commonFields(flags, true);
  if (flags.archived !== undefined) fields.archived = flags.archived;
  if (Object.keys(fields).length === 0) {
    throw new UsageError(
      'Nothing to change: pass --name, --price (and --currency), --feature, --api-call-limit, --trial-days or --archived/--no-archived.',
      { code: 'nothing_to_update' },
    );
  }
  return fields;
}

/** Every plan of the app (all pages); `app` is --app (the default app when left out). */
export async function listPlans(deps: PlanDeps, input: { app?: string }): Promise<Plan[]> {
  return deps.api.list<Plan>(plansPath(await resolveAppId(deps, input)));
}

/** One plan of the app. */
export async function getPlan(deps: PlanDeps, input: { app?: string; id: string }): Promise<Plan> {
  const app = await resolveAppId(deps, input);
  return (await deps.api.get<Plan>(planPath(app, checkPlanId(input.id)))).data;
}

/** Creates a plan from a body made by planCreateBody. */
export async function createPlan(
  deps: PlanDeps,
  input: { app?: string; body: Record<string, unknown> },
): Promise<Plan> {
  const app = await resolveAppId(deps, input);
  return (await deps.api.post<Plan>(plansPath(app), input.body)).data;
}

/** Changes a plan with a body made by planUpdateBody. */
export async function updatePlan(
  deps: PlanDeps,
  input: { app?: string; id: string; body: Record<string, unknown> },
): Promise<Plan> {
  const app = await resolveAppId(deps, input);
  const path = planPath(app, checkPlanId(input.id));
  const price = input.body.price as { amount: string; currency: undefined } | undefined;
  let body = input.body;
  if (price && price.currency === undefined) {
    const current = (await deps.api.get<Plan>(path)).data.price;
    if (!current?.currency) {
      throw new UsageError(
        `Plan ${input.id} has no price yet, so no currency: add --currency, such as USD.`,
        {
          code: 'invalid_price',
        },
      );
    }
    body = { ...body, price: parseMoney(price.amount, current.currency) };
  }
  return (await deps.api.patch<Plan>(path, body)).data;
}

/** Deletes a plan once confirmed; a plan with subscribers is archived instead (the server answers 200 with it). */
export async function deletePlan(
  deps: PlanDeps & Pick<Deps, 'out' | 'stdin'>,
  input: { app?: string; id: string; yes?: boolean },
): Promise<{ id: string; deleted: boolean; archived: boolean; plan?: Plan }> {
  const app = await resolveAppId(deps, input);
  const id = checkPlanId(input.id);
  await confirmAction(deps, `Delete plan ${id} of ${app} (archived instead if it has subscribers)?`, {
    yes: input.yes,
  });
  const res = await deps.api.delete<Plan | undefined>(planPath(app, id));
  if (res.status !== 204 && res.data && typeof res.data === 'object' && res.data.archived === true) {
    return { id, deleted: false, archived: true, plan: res.data };
  }
  return { id, deleted: true, archived: false };
}
