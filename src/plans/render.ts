import type { Deps } from '../deps.js';
import type { Column } from '../output/output.js';
import { formatMoney } from './money.js';
import type { Plan } from './plans.js';

/** Kinds as users type them (the wire says one_time). */
const kindLabel = (kind: string) => kind.replace('_', '-');

/** Table columns for plans: id, name, kind, price, api call limit, archived, subscribers. */
export const planColumns: Column<Plan>[] = [
  { header: 'id', get: (p) => p.id },
  { header: 'name', get: (p) => p.name },
  { header: 'kind', get: (p) => kindLabel(p.kind) },
  { header: 'price', get: (p) => formatMoney(p.price) },
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
    ...(plan.trial_days === undefined
      ? []
      : [['trial', plan.trial_days > 0 ? `${plan.trial_days} days` : 'none'] as [string, string]]),
    ['archived', plan.archived ? 'yes' : 'no'],
    ['subscribers', plan.subscribers],
  ]);
}
