import type { Deps } from '../deps.js';
import type { Column } from '../output/output.js';
import { formatMoney } from './money.js';
import type { Plan } from './plans.js';

/** Kinds as users type them (the wire says one_time). */
const kindLabel = (kind: string) => kind.replace('_', '-');

/** Table columns for plans: what people choose a plan by (price, trial, features), then the rest. */
export const planColumns: Column<Plan>[] = [
  { header: 'id', get: (p) => p.id },
  { header: 'name', get: (p) => p.name },
  { header: 'kind', get: (p) => kindLabel(p.kind) },
  { header: 'price', get: (p) => formatMoney(p.price) },
  { header: 'trial', get: (p) => trialText(p) },
  { header: 'features', get: (p) => p.features },
  { header: 'api calls', get: (p) => p.api_call_limit ?? 'unlimited' },
  { header: 'archived', get: (p) => (p.archived ? 'yes' : 'no') },
  { header: 'subscribers', get: (p) => p.subscribers },
];

/** Prints one plan as label: value lines on stdout. */
export function showPlan(deps: Pick<Deps, 'out'>, plan: Plan): void {
  deps.out.fields([
    ['id', plan.id],
    ['name', plan.name],
    ['kind', kindLabel(plan.kind)],
    ['price', formatMoney(plan.price)],
    ['features', plan.features],
    ['api call limit', plan.api_call_limit ?? 'unlimited'],
    ...(plan.trial_days === undefined ? [] : [['trial', trialText(plan)] as [string, string]]),
    ['archived', plan.archived ? 'yes' : 'no'],
    ['subscribers', plan.subscribers],
  ]);
}

/** A plan's free trial as people say it: "14 days", "none" ("-" when the marketplace does not say). */
function trialText(plan: Plan): string {
  if (plan.trial_days === undefined) return '-';
  return plan.trial_days > 0 ? `${plan.trial_days} day${plan.trial_days === 1 ? '' : 's'}` : 'none';
}
