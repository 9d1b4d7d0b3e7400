import type { Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { EVENT_NAMES } from '../../../wire.js';
import { act, scopedApp, outcome, render, type AppView, type ConsoleRequest } from '../request.js';
import { Badge, Card, Fields, PostForm, appPath } from '../layout.js';
import { DELIVERY_STATES, type DeliveryState } from '../../kernel/deliveries/delivery-records.js';

/** A state as the pages show it: `not_sent` says why. */
const stateText = (s: DeliveryState | string) => (s === 'not_sent' ? 'not sent: no webhook URL' : s);

type App = Hono<{ Variables: { console: ConsoleRequest } }>;

interface Attempt {
  at: string;
  status: number | null;
  latency_ms: number | null;
  error: string | null;
  response_excerpt?: string | null;
}

/** A delivery as the API shows it (a listing has `last_attempt`, the detail every attempt). */
interface DeliveryView {
  id: string;
  event: string;
  state: string;
  created_at: string;
  url: string | null;
  attempt_count: number;
  last_attempt?: Attempt | null;
  next_attempt_at?: string | null;
  attempts?: Attempt[];
  body?: string;
}

const answerText = (a: Attempt | null | undefined) =>
  !a ? '—' : a.status !== null ? `${a.status} in ${a.latency_ms ?? '?'} ms` : `${a.error ?? 'no answer'}`;

const DeliveryList: FC<{
  app: AppView;
  deliveries: DeliveryView[];
  filter: { event: string; state: string };
  next: string | null;
}> = ({ app, deliveries, filter, next }) => (
  <>
    <h1>Webhook deliveries</h1>
    <p class="muted">
      Every event sent to {app.webhook_url ? <code>{app.webhook_url}</code> : 'the webhook URL (none is set)'}
      , with each attempt. The same record as <code>mkt events list</code>.
    </p>
    <Card title="Filter" id="filter">
      <form method="get" action={appPath(app.id, '/deliveries')} class="row" aria-label="Filter deliveries">
        <label>
          Event
          <select name="event">
            <option value="">any</option>
            {EVENT_NAMES.map((e) => (
              <option value={e} selected={filter.event === e}>
                {e}
              </option>
            ))}
          </select>
        </label>
        <label>
          State
          <select name="state">
            <option value="">any</option>
            {DELIVERY_STATES.map((s) => (
              <option value={s} selected={filter.state === s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" class="secondary">
          Show
        </button>
      </form>
    </Card>
    <Card title="Deliveries" id="deliveries">
      {deliveries.length === 0 ? (
        <p class="empty">No deliveries{filter.event || filter.state ? ' match' : ' yet'}.</p>
      ) : (
        <div class="table-wrap" tabindex={0}>
          <table>
            <caption class="vh">Deliveries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Delivery</th>
                <th scope="col">Event</th>
                <th scope="col">State</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last answer</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((d) => (
                <tr>
                  <td class="mono">
                    <a href={appPath(app.id, `/deliveries/${encodeURIComponent(d.id)}`)}>{d.id}</a>
                  </td>
                  <td>{d.event}</td>
                  <td>
                    <Badge text={stateText(d.state)} />
                  </td>
                  <td class="num">{d.attempt_count}</td>
                  <td>{answerText(d.last_attempt)}</td>
                  <td>{d.created_at}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {next ? (
        <p>
          <a href={next}>Older deliveries →</a>
        </p>
      ) : null}
    </Card>
  </>
);

const DeliveryDetail: FC<{ app: AppView; d: DeliveryView; csrf: string }> = ({ app, d, csrf }) => (
  <>
    <p>
      <a href={appPath(app.id, '/deliveries')}>← All deliveries</a>
    </p>
    <h1>
      Delivery <code>{d.id}</code>
    </h1>
    <Card title="Delivery" id="delivery">
      <Fields
        rows={[
          ['Event', d.event],
          ['State', <Badge text={stateText(d.state)} />],
          ['URL', d.url ? <code>{d.url}</code> : 'no webhook URL'],
          ['Created', d.created_at],
          ['Next attempt', d.next_attempt_at ?? null],
        ]}
      />
      <p>
        <PostForm
          action={appPath(app.id, `/deliveries/${encodeURIComponent(d.id)}/resend`)}
          csrf={csrf}
          label="Resend"
        >
          <button type="submit">Resend now</button>
        </PostForm>{' '}
        <span class="muted">Same id and data, a fresh timestamp and signature.</span>
      </p>
    </Card>
    <Card title={`Attempts (${d.attempts?.length ?? 0})`} id="attempts">
      {d.state === 'not_sent' ? (
        <p class="empty">
          Not sent to a URL: the app had no webhook URL. It went only over the relay, to{' '}
          <code>mkt webhooks listen</code>; what your handler answered is in listen's journal (
          <code>mkt webhooks deliveries</code>, <code>mkt events get</code>).
        </p>
      ) : (d.attempts ?? []).length === 0 ? (
        <p class="empty">No attempts yet.</p>
      ) : (
        <div class="table-wrap" tabindex={0}>
          <table>
            <caption class="vh">Attempts, oldest first</caption>
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">At</th>
                <th scope="col">Status</th>
                <th scope="col">Latency</th>
                <th scope="col">Error</th>
                <th scope="col">What the URL answered</th>
              </tr>
            </thead>
            <tbody>
              {(d.attempts ?? []).map((a, i) => (
                <tr class="attempt">
                  <td class="num">{i + 1}</td>
                  <td>{a.at}</td>
                  <td>
                    {a.status === null ? <span class="s-bad">no answer</span> : <Badge text={a.status} />}
                  </td>
                  <td class="num">{a.latency_ms === null ? '—' : `${a.latency_ms} ms`}</td>
                  <td>{a.error ?? ''}</td>
                  <td>
                    {a.response_excerpt ? <pre>{a.response_excerpt}</pre> : <span class="muted">—</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Card>
    {d.body ? (
      <Card title="Payload" id="payload">
        <pre>{pretty(d.body)}</pre>
      </Card>
    ) : null}
  </>
);

function pretty(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

/** The deliveries tab: the list with filters, one delivery with its attempts, and resend. */
export function registerDeliveryRoutes(app: App): void {
  app.get('/console/apps/:app/deliveries', async (c) => {
    const r = c.get('console');
    const current = scopedApp(r);
    const filter = { event: c.req.query('event') ?? '', state: c.req.query('state') ?? '' };
    const query = new URLSearchParams({ limit: '50' });
    if (filter.event) query.set('event', filter.event);
    if (filter.state) query.set('state', filter.state);
    const cursor = c.req.query('cursor');
    if (cursor) query.set('cursor', cursor);
    const answer = await r.api.get<{ data: DeliveryView[]; next_cursor: string | null }>(
      `/apps/${encodeURIComponent(current.id)}/deliveries?${query}`,
    );
    let next: string | null = null;
    if (answer.data?.next_cursor) {
      const more = new URLSearchParams({ ...filter, cursor: answer.data.next_cursor });
      next = `${appPath(current.id, '/deliveries')}?${more}`;
    }
    return render(r, { title: 'Deliveries', app: current, tab: 'deliveries' }, () =>
      answer.error ? (
        <p class="flash error">{answer.error.message}</p>
      ) : (
        <DeliveryList app={current} deliveries={answer.data.data} filter={filter} next={next} />
      ),
    );
  });

  app.get('/console/apps/:app/deliveries/:dlv', async (c) => {
    const r = c.get('console');
    const current = scopedApp(r);
    const answer = await r.api.get<DeliveryView>(
      `/apps/${encodeURIComponent(current.id)}/deliveries/${encodeURIComponent(c.req.param('dlv'))}`,
    );
    return render(
      r,
      { title: 'Delivery', app: current, tab: 'deliveries', status: answer.error ? answer.status : 200 },
      (csrf) =>
        answer.error ? (
          <p class="flash error">{answer.error.message}</p>
        ) : (
          <DeliveryDetail app={current} d={answer.data} csrf={csrf} />
        ),
    );
  });

  app.post('/console/apps/:app/deliveries/:dlv/resend', async (c) => {
    const r = c.get('console');
    const id = c.req.param('app');
    const dlv = c.req.param('dlv');
    return act(r, appPath(id, `/deliveries/${encodeURIComponent(dlv)}`), async () => {
      const answer = await r.api.call<DeliveryView>(
        'POST',
        `/apps/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(dlv)}/resend`,
      );
      const last = answer.data?.attempts?.at(-1);
      return outcome(answer, `Resent ${dlv}: ${answerText(last)}.`);
    });
  });
}
