import type { Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { EVENT_NAMES } from '../../../wire.js';
import { act, scopedApp, field, outcome, render, type AppView, type ConsoleRequest } from '../request.js';
import { Badge, Card, Fields, PostForm, appPath } from '../layout.js';
import type { PlanView } from './plans.js';
import {
  ADVANCES,
  PAYMENT_BEHAVIOURS,
  PlanSelect,
  STATUSES,
  UserSelect,
  testUsers,
  type TestUserView,
} from './simulator-fields.js';
export { testUsers, type TestUserView } from './simulator-fields.js';

type App = Hono<{ Variables: { console: ConsoleRequest } }>;

const SimulatorPage: FC<{
  app: AppView;
  csrf: string;
  clock: { now: string; offset_s: number } | undefined;
  users: TestUserView[];
  plans: PlanView[];
}> = ({ app, csrf, clock, users, plans }) => {
  const base = (sub: string) => appPath(app.id, `/simulator${sub}`);
  return (
    <>
      <h1>Integration Simulator</h1>
      <div class="grid">
        <Card title="Business clock" id="clock">
          {clock ? (
            <>
              <Fields
                rows={[
                  ['Now', <span id="clock-now">{clock.now}</span>],
                  ['Ahead of real time', `${clock.offset_s} s`],
                ]}
              />
              <PostForm action={base('/clock')} csrf={csrf} class="row" label="Advance the clock">
                <label>
                  Advance by
                  <select name="advance_s">
                    {ADVANCES.map(([v, l]) => (
                      <option value={v}>{l}</option>
                    ))}
                  </select>
                </label>
                <button type="submit">Advance</button>
              </PostForm>
              <p class="muted">
                Renewals, trial ends, payment retries and expiries in between happen, with their events.
              </p>
            </>
          ) : (
            <p class="empty">This sandbox has no business clock.</p>
          )}
        </Card>
        <Card title="Trigger an event" id="trigger">
          <PostForm action={base('/events')} csrf={csrf} class="stack" label="Trigger an event">
            <label>
              Event
              <select name="event">
                {EVENT_NAMES.map((e) => (
                  <option value={e}>{e}</option>
                ))}
              </select>
            </label>
            <label>
              Test user
              <UserSelect users={users} />
            </label>
            <label>
              Plan <span class="hint">for subscription.created</span>
              <PlanSelect plans={plans} any />
            </label>
            <label class="check">
              <input type="checkbox" name="synthetic" value="true" /> Synthetic: send as given, change nothing
            </label>
            <div>
              <button type="submit">Send event</button>
            </div>
          </PostForm>
        </Card>
        <Card title="Entitlement check" id="check">
          <PostForm action={base('/check')} csrf={csrf} class="stack" label="Check an entitlement">
            <label>
              Test user
              <UserSelect users={users} />
            </label>
            <label>
              Feature
              <input name="feature" required placeholder="export" />
            </label>
            <div>
              <button type="submit">Check</button>
            </div>
          </PostForm>
        </Card>
      </div>
      <Card title="Test users" id="users">
        {users.length === 0 ? (
          <p class="empty">No test users to show (this sandbox lists them once it has any).</p>
        ) : (
          <div class="table-wrap" tabindex={0}>
            <table>
              <caption class="vh">Test users of {app.name}</caption>
              <thead>
                <tr>
                  <th scope="col">User</th>
                  <th scope="col">Plan</th>
                  <th scope="col">Status</th>
                  <th scope="col">Until</th>
                  <th scope="col">Payments</th>
                  <th scope="col">API calls</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {users.map((u) => (
                  <tr id={`user-${u.id}`}>
                    <td>
                      {u.name ?? u.email}
                      <br />
                      <code>{u.id}</code>
                    </td>
                    <td class="mono">{u.plan ?? '—'}</td>
                    <td>{u.status ? <Badge text={u.status} /> : '—'}</td>
                    <td>{u.expires_at ?? '—'}</td>
                    <td>{u.payment_behaviour ?? '—'}</td>
                    <td class="num">{u.usage ? `${u.usage.api_calls}` : '—'}</td>
                    <td>
                      <PostForm
                        action={base(`/users/${encodeURIComponent(u.id)}/plan`)}
                        csrf={csrf}
                        label={`Change the plan of ${u.id}`}
                      >
                        <label class="vh" for={`plan-${u.id}`}>
                          New plan for {u.id}
                        </label>
                        <select name="plan" id={`plan-${u.id}`}>
                          {plans
                            .filter((p) => !p.archived)
                            .map((p) => (
                              <option value={p.id} selected={p.id === u.plan}>
                                {p.id}
                              </option>
                            ))}
                        </select>{' '}
                        <button type="submit" class="secondary">
                          Change plan
                        </button>
                      </PostForm>{' '}
                      <PostForm action={base(`/users/${encodeURIComponent(u.id)}/cancel`)} csrf={csrf}>
                        <button
                          type="submit"
                          class="secondary"
                          aria-label={`Cancel the subscription of ${u.id}`}
                        >
                          Cancel
                        </button>
                      </PostForm>{' '}
                      <PostForm action={base(`/users/${encodeURIComponent(u.id)}/revoke`)} csrf={csrf}>
                        <button type="submit" class="danger" aria-label={`Revoke the app for ${u.id}`}>
                          Revoke
                        </button>
                      </PostForm>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
      <Card title="Add a test user" id="add-user">
        <PostForm action={base('/users')} csrf={csrf} class="stack" label="Add a test user">
          <label>
            Plan
            <PlanSelect plans={plans} />
          </label>
          <label>
            Trial days <span class="hint">empty: the plan's own</span>
            <input name="trial_days" type="number" min={0} max={365} />
          </label>
          <label>
            Payments
            <select name="payment_behaviour">
              <option value="">(the sandbox's default)</option>
              {PAYMENT_BEHAVIOURS.map((b) => (
                <option value={b}>{b}</option>
              ))}
            </select>
          </label>
          <label>
            Status <span class="hint">forced, for edge cases; empty: as the plan's life gives it</span>
            <select name="status">
              <option value="">(as subscribed)</option>
              {STATUSES.map((st) => (
                <option value={st}>{st}</option>
              ))}
            </select>
          </label>
          <label>
            Name <span class="hint">optional</span>
            <input name="name" maxlength={100} />
          </label>
          <label>
            Email <span class="hint">optional</span>
            <input name="email" type="email" maxlength={200} />
          </label>
          <div>
            <button type="submit">Add test user</button>
          </div>
        </PostForm>
      </Card>
    </>
  );
};

/** Describes a clock move: how many transitions happened, and the events they sent. */
function clockOutcome(data: {
  now?: string;
  transitions?: Array<{ user_id: string; from: string; to: string; events?: Array<{ event: string }> }>;
}): string {
  const t = data.transitions ?? [];
  const said = t
    .slice(0, 10)
    .map(
      (x) =>
        `${x.user_id}: ${x.from} → ${x.to}${x.events?.length ? ` (${x.events.map((e) => e.event).join(', ')})` : ''}`,
    )
    .join('; ');
  return `The business time is now ${data.now ?? '?'}; ${t.length} transition${t.length === 1 ? '' : 's'}${said ? `: ${said}` : ''}${t.length > 10 ? '; …' : ''}.`;
}

/** The simulator tab: clock, test users and their lifecycle actions, events, entitlement checks. */
export function registerSimulatorRoutes(app: App): void {
  app.get('/console/apps/:app/simulator', async (c) => {
    const r = c.get('console');
    const current = scopedApp(r);
    const id = encodeURIComponent(current.id);
    const [clock, users, plans] = await Promise.all([
      r.api.get<{ now: string; offset_s: number }>('/simulator/clock'),
      testUsers(r, current.id),
      r.api.list<PlanView>(`/apps/${id}/plans?limit=100`),
    ]);
    return render(r, { title: 'Simulator', app: current, tab: 'simulator' }, (csrf) => (
      <SimulatorPage
        app={current}
        csrf={csrf}
        clock={clock.status === 200 ? clock.data : undefined}
        users={users}
        plans={plans}
      />
    ));
  });

  const back = (c: { req: { param(n: string): string } }) => appPath(c.req.param('app'), '/simulator');

  app.post('/console/apps/:app/simulator/clock', async (c) => {
    const r = c.get('console');
    return act(r, back(c), async () => {
      const answer = await r.api.call<Parameters<typeof clockOutcome>[0]>('POST', '/simulator/clock', {
        advance_s: Number(await field(r, 'advance_s')),
      });
      return outcome(answer, answer.error ? '' : clockOutcome(answer.data));
    });
  });

  app.post('/console/apps/:app/simulator/users', async (c) => {
    const r = c.get('console');
    return act(r, back(c), async () => {
      const body: Record<string, unknown> = { app_id: c.req.param('app'), plan: await field(r, 'plan') };
      const trial = await field(r, 'trial_days');
      if (trial) body.trial_days = Number(trial);
      for (const name of ['payment_behaviour', 'status', 'name', 'email']) {
        const v = await field(r, name);
        if (v) body[name] = v;
      }
      const answer = await r.api.call<TestUserView>('POST', '/simulator/users', body);
      return outcome(answer, `Added test user ${answer.data?.id ?? ''} (${answer.data?.status ?? ''}).`);
    });
  });

  for (const action of ['cancel', 'revoke'] as const) {
    app.post(`/console/apps/:app/simulator/users/:user/${action}`, async (c) => {
      const r = c.get('console');
      const user = c.req.param('user');
      return act(r, back(c), async () =>
        outcome(
          await r.api.call('POST', `/simulator/users/${encodeURIComponent(user)}/${action}`, {
            app_id: c.req.param('app'),
          }),
          action === 'cancel' ? `Cancelled the subscription of ${user}.` : `Revoked the app for ${user}.`,
        ),
      );
    });
  }

  app.post('/console/apps/:app/simulator/users/:user/plan', async (c) => {
    const r = c.get('console');
    const user = c.req.param('user');
    return act(r, back(c), async () => {
      const plan = await field(r, 'plan');
      const answer = await r.api.call('PATCH', `/simulator/users/${encodeURIComponent(user)}`, {
        app_id: c.req.param('app'),
        plan,
      });
      return outcome(answer, `${user} is now on ${plan}.`);
    });
  });

  app.post('/console/apps/:app/simulator/events', async (c) => {
    const r = c.get('console');
    return act(r, back(c), async () => {
      const event = await field(r, 'event');
      const data: Record<string, unknown> = { user_id: await field(r, 'user_id') };
      const plan = await field(r, 'plan');
      if (plan && event.startsWith('subscription.')) data.plan = plan;
      const body: Record<string, unknown> = { app_id: c.req.param('app'), event, data };
      if ((await field(r, 'synthetic')) === 'true') body.synthetic = true;
      const answer = await r.api.call<{
        delivery_id?: string;
        webhook?: { status?: string; response_status?: number | null; error?: string | null };
      }>('POST', '/simulator/events', body);
      const w = answer.data?.webhook;
      const webhook = !w
        ? ''
        : w.status === 'no_url'
          ? 'no webhook URL is set'
          : `the webhook URL answered ${w.response_status ?? w.error ?? '?'}`;
      return outcome(answer, `Sent ${event} as ${answer.data?.delivery_id ?? '?'}: ${webhook}.`);
    });
  });

  app.post('/console/apps/:app/simulator/check', async (c) => {
    const r = c.get('console');
    return act(r, back(c), async () => {
      const feature = await field(r, 'feature');
      const user = await field(r, 'user_id');
      const answer = await r.api.call<{ allowed?: boolean; reason?: string; message?: string }>(
        'POST',
        '/simulator/entitlement-checks',
        {
          app_id: c.req.param('app'),
          user_id: user,
          feature,
        },
      );
      const d = answer.data;
      return outcome(
        answer,
        `${user} ${d?.allowed ? 'may' : 'may not'} use "${feature}": ${d?.message ?? d?.reason ?? ''}`,
      );
    });
  });
}
