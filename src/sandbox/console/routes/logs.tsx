import type { Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { scopedApp, render, type AppView, type ConsoleRequest } from '../request.js';
import { Card, appPath } from '../layout.js';
import { paramsText } from '../../logs/request-log.js';
import { testUsers, type TestUserView } from './simulator.js';

type App = Hono<{ Variables: { console: ConsoleRequest } }>;

/** A request log entry as the API shows it. */
interface LogEntry {
  id: string;
  at: string;
  method: string;
  path: string;
  params?: Record<string, string>;
  status: number;
  latency_ms: number;
  credential: { kind: string; id: string } | null;
  user_id?: string | null;
  error_code?: string | null;
}

const statusClass = (s: number) => (s >= 500 ? 's-bad' : s >= 400 ? 's-warn' : 's-ok');

const LogPage: FC<{ app: AppView; entries: LogEntry[]; filter: { status: string; path: string } }> = ({
  app,
  entries,
  filter,
}) => {
  const query = new URLSearchParams();
  if (filter.status) query.set('status', filter.status);
  if (filter.path) query.set('path', filter.path);
  return (
    <>
      <h1>Request log</h1>
      <p class="muted">
        The app's API requests, newest first (the last 10,000 are kept; never a secret, token or body). The
        same log as <code>mkt logs tail</code>.
      </p>
      <Card title="Filter" id="filter">
        <form method="get" action={appPath(app.id, '/logs')} class="row" aria-label="Filter requests">
          <label>
            Status
            <select name="status">
              {[
                ['', 'any'],
                ['2xx', '2xx'],
                ['4xx', '4xx'],
                ['5xx', '5xx'],
              ].map(([v, l]) => (
                <option value={v} selected={filter.status === v}>
                  {l}
                </option>
              ))}
            </select>
          </label>
          <label>
            Path starts with
            <input name="path" value={filter.path} placeholder="/api/v1/apps" />
          </label>
          <button type="submit" class="secondary">
            Show
          </button>
        </form>
      </Card>
      <Card title="Requests" id="requests">
        <p id="live-status" class="muted" role="status">
          Reload for new requests (live updates need JavaScript).
        </p>
        <div class="table-wrap" tabindex={0}>
          <table>
            <caption class="vh">Requests, newest first (times in UTC)</caption>
            <thead>
              <tr>
                <th scope="col">At (UTC)</th>
                <th scope="col">Status</th>
                <th scope="col">Method</th>
                <th scope="col">Path</th>
                <th scope="col">Latency</th>
                <th scope="col">Credential</th>
                <th scope="col">User</th>
                <th scope="col">Error</th>
                <th scope="col">Request id</th>
              </tr>
            </thead>
            <tbody id="log-rows" data-stream={`${appPath(app.id, '/logs/stream')}?${query}`}>
              {entries.map((e) => (
                <tr id={e.id}>
                  <td class="nowrap" title={e.at}>
                    {e.at.slice(11, 23)}
                  </td>
                  <td class={`num ${statusClass(e.status)}`}>{e.status}</td>
                  <td>{e.method}</td>
                  <td class="mono">
                    {e.path}
                    {paramsText(e.params) !== '' ? <small> {paramsText(e.params)}</small> : ''}
                  </td>
                  <td class="num">{e.latency_ms} ms</td>
                  <td class="mono">{e.credential ? `${e.credential.kind}:${e.credential.id}` : '-'}</td>
                  <td class="mono">{e.user_id ?? '-'}</td>
                  <td>{e.error_code ?? ''}</td>
                  <td class="mono">{e.id}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {entries.length === 0 ? (
          <p class="empty" id="log-empty">
            No requests yet.
          </p>
        ) : null}
      </Card>
    </>
  );
};

const PreviewPage: FC<{ app: AppView; users: TestUserView[]; userId: string; frame: string | null }> = ({
  app,
  users,
  userId,
  frame,
}) => (
  <>
    <h1>Embedded app preview</h1>
    <p class="muted">
      The app as the dashboard embeds it for a test user, with a fresh context token (5 minutes). The same as{' '}
      <code>mkt apps preview</code>.
    </p>
    <Card title="Open as" id="preview-user">
      <form method="get" action={appPath(app.id, '/preview')} class="row" aria-label="Choose a test user">
        <label>
          Test user
          {users.length ? (
            <select name="user_id">
              {users.map((u) => (
                <option value={u.id} selected={u.id === userId}>
                  {u.name ?? u.email ?? u.id} ({u.id})
                </option>
              ))}
            </select>
          ) : (
            <input name="user_id" value={userId} placeholder="usr_…" required />
          )}
        </label>
        <button type="submit" class="secondary">
          Open
        </button>
      </form>
    </Card>
    {!app.embed_url ? (
      <p class="empty">This app has no embed URL: set one in Overview → Settings.</p>
    ) : frame ? (
      <iframe class="preview" title={`${app.name} as ${userId}`} src={frame}></iframe>
    ) : null}
  </>
);

/** The request log (with its live stream) and the embedded-app preview. */
export function registerLogRoutes(app: App): void {
  app.get('/console/apps/:app/logs', async (c) => {
    const r = c.get('console');
    const current = scopedApp(r);
    const filter = { status: c.req.query('status') ?? '', path: c.req.query('path') ?? '' };
    const query = new URLSearchParams({ limit: '100' });
    if (filter.status) query.set('status', filter.status);
    if (filter.path) query.set('path', filter.path);
    const entries = await r.api.list<LogEntry>(`/apps/${encodeURIComponent(current.id)}/logs?${query}`);
    return render(
      r,
      { title: 'Request log', app: current, tab: 'logs' },
      <LogPage app={current} entries={entries} filter={filter} />,
    );
  });

  // The API's stream, passed through for the page's EventSource (which sends the session cookie).
  app.get('/console/apps/:app/logs/stream', async (c) => {
    const r = c.get('console');
    const id = scopedApp(r).id;
    const query = new URLSearchParams();
    for (const name of ['status', 'path']) {
      const v = c.req.query(name);
      if (v) query.set(name, v);
    }
    const upstream = await r.api.stream(
      `/apps/${encodeURIComponent(id)}/logs/stream?${query}`,
      c.req.raw.signal,
    );
    return new Response(quietly(upstream.body), {
      status: upstream.status,
      headers: {
        'content-type': upstream.headers.get('content-type') ?? 'text/event-stream',
        'cache-control': 'no-store',
      },
    });
  });

  app.get('/console/apps/:app/preview', async (c) => {
    const r = c.get('console');
    const current = scopedApp(r);
    const users = await testUsers(r, current.id);
    const userId = c.req.query('user_id') ?? users[0]?.id ?? '';
    // The frame's address carries a preview pass of this app: the dashboard page signs a context token
    // for its holder only, and the console's cookie never reaches /dashboard.
    const link = userId && current.embed_url ? new URL(r.deps.previewLink(current.id, userId).url) : null;
    return render(
      r,
      { title: 'Preview', app: current, tab: 'preview' },
      <PreviewPage
        app={current}
        users={users}
        userId={userId}
        frame={link ? `${link.pathname}${link.search}` : null}
      />,
    );
  });
}

/** A stream that ends (rather than fails) when its source is cut: the page going away is not an error. */
function quietly(source: ReadableStream<Uint8Array> | null): ReadableStream<Uint8Array> | null {
  if (!source) return null;
  const reader = source.getReader();
  return new ReadableStream({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch {
        controller.close();
      }
    },
    cancel() {
      void reader.cancel().catch(() => undefined);
    },
  });
}
