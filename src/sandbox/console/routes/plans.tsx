import type { Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { formatAmount, minorUnits } from '../../../wire.js';
import { act, scopedApp, field, outcome, render, type AppView, type ConsoleRequest } from '../request.js';
import { Badge, Card, PostForm, appPath } from '../layout.js';

type App = Hono<{ Variables: { console: ConsoleRequest } }>;

/** A plan as the API shows it. */
export interface PlanView {
  id: string;
  name: string;
  kind: string;
  price: { amount: number; currency: string } | null;
  features: string[];
  api_call_limit: number | null;
  archived: boolean;
  subscribers?: number;
  trial_days?: number;
}

/** A price exactly as `mkt plans` shows it: "9.99 USD", "500 JPY" (formatAmount). */
export function priceText(price: PlanView['price']): string {
  return price ? formatAmount(price.amount, price.currency) : 'free';
}

/** A decimal price typed in the form ("9.99") as minor units of its currency, exactly; or why not. */
export function priceAmount(text: string, currency: string): number | string {
  const digits = minorUnits(currency);
  if (digits === undefined) return `"${currency}" is not an ISO 4217 currency code (USD, EUR, JPY…).`;
  const m = /^(\d{1,13})(?:\.(\d+))?$/.exec(text);
  if (!m || (m[2] ?? '').length > digits) {
    return `"${text}" is not a price in ${currency}: a positive number with at most ${digits} decimals.`;
  }
  const amount = Number(m[1]) * 10 ** digits + Number((m[2] ?? '').padEnd(digits, '0') || '0');
  return amount > 0 ? amount : `A ${currency} price must be more than 0 (use the free kind for a free plan).`;
}

const PlansPage: FC<{ app: AppView; plans: PlanView[]; csrf: string }> = ({ app, plans, csrf }) => (
  <>
    <h1>Plans</h1>
    <Card title="Pricing plans" id="plans">
      {plans.length === 0 ? (
        <p class="empty">No plans yet.</p>
      ) : (
        <div class="table-wrap" tabindex={0}>
          <table>
            <caption class="vh">Plans of {app.name}</caption>
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Price</th>
                <th scope="col">Features</th>
                <th scope="col">API calls</th>
                <th scope="col">Subscribers</th>
                <th scope="col">
                  <span class="vh">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {plans.map((p) => (
                <tr id={`plan-${p.id}`}>
                  <td class="mono">{p.id}</td>
                  <td>
                    {p.name} {p.archived ? <Badge text="archived" /> : null}
                  </td>
                  <td>{p.kind}</td>
                  <td class="num">{priceText(p.price)}</td>
                  <td>{p.features.join(', ') || <span class="muted">—</span>}</td>
                  <td class="num">{p.api_call_limit ?? 'unlimited'}</td>
                  <td class="num">{p.subscribers ?? '—'}</td>
                  <td>
                    {p.archived ? null : (
                      <PostForm
                        action={appPath(app.id, `/plans/${encodeURIComponent(p.id)}/delete`)}
                        csrf={csrf}
                      >
                        <button type="submit" class="danger" aria-label={`Delete or archive ${p.id}`}>
                          Delete
                        </button>
                      </PostForm>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p class="muted">A plan with subscribers is archived rather than deleted.</p>
    </Card>
    <Card title="Create a plan" id="create-plan">
      <PostForm action={appPath(app.id, '/plans')} csrf={csrf} class="stack" label="Create a plan">
        <label>
          Id <span class="hint">a slug, e.g. pro-monthly</span>
          <input name="id" required pattern="[a-z0-9][a-z0-9-]*" maxlength={64} />
        </label>
        <label>
          Name
          <input name="name" required maxlength={100} />
        </label>
        <label>
          Kind
          <select name="kind">
            <option value="free">free</option>
            <option value="monthly">monthly</option>
            <option value="annual">annual</option>
            <option value="one_time">one-time</option>
          </select>
        </label>
        <div class="pair">
          <label>
            Price <span class="hint">e.g. 9.99 (not for free)</span>
            <input name="price" inputmode="decimal" />
          </label>
          <label>
            Currency
            <input name="currency" value="USD" maxlength={3} size={4} />
          </label>
        </div>
        <label>
          Features <span class="hint">comma-separated</span>
          <input name="features" placeholder="export, reports" />
        </label>
        <label>
          API call limit <span class="hint">per period; empty for unlimited</span>
          <input name="api_call_limit" type="number" min={1} />
        </label>
        <div>
          <button type="submit">Create plan</button>
        </div>
      </PostForm>
    </Card>
  </>
);

/** The plans tab: list, create, delete (or archive). */
export function registerPlanRoutes(app: App): void {
  app.get('/console/apps/:app/plans', async (c) => {
    const r = c.get('console');
    const current = scopedApp(r);
    const plans = await r.api.list<PlanView>(`/apps/${encodeURIComponent(current.id)}/plans?limit=100`);
    return render(r, { title: 'Plans', app: current, tab: 'plans' }, (csrf) => (
      <PlansPage app={current} plans={plans} csrf={csrf} />
    ));
  });

  app.post('/console/apps/:app/plans', async (c) => {
    const r = c.get('console');
    const id = c.req.param('app');
    return act(r, appPath(id, '/plans'), async () => {
      const kind = await field(r, 'kind');
      const currency = (await field(r, 'currency')).toUpperCase() || 'USD';
      let price: { amount: number; currency: string } | null = null;
      if (kind !== 'free') {
        const amount = priceAmount(await field(r, 'price'), currency);
        if (typeof amount === 'string') return { kind: 'error', message: amount };
        price = { amount, currency };
      }
      const limit = await field(r, 'api_call_limit');
      const answer = await r.api.call('POST', `/apps/${encodeURIComponent(id)}/plans`, {
        id: await field(r, 'id'),
        name: await field(r, 'name'),
        kind,
        price,
        features: (await field(r, 'features'))
          .split(',')
          .map((f) => f.trim())
          .filter(Boolean),
        api_call_limit: limit ? Number(limit) : null,
      });
      return outcome(answer, `Created plan ${await field(r, 'id')}.`);
    });
  });

  app.post('/console/apps/:app/plans/:plan/delete', async (c) => {
    const r = c.get('console');
    const id = c.req.param('app');
    const plan = c.req.param('plan');
    return act(r, appPath(id, '/plans'), async () => {
      const answer = await r.api.call<PlanView | undefined>(
        'DELETE',
        `/apps/${encodeURIComponent(id)}/plans/${encodeURIComponent(plan)}`,
      );
      return outcome(
        answer,
        answer.data?.archived ? `Archived ${plan} (it has subscribers).` : `Deleted ${plan}.`,
      );
    });
  });
}
