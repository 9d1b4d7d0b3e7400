import type { Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { act, scopedApp, field, outcome, render, type AppView, type ConsoleRequest } from '../request.js';
import { Card, Fields, PostForm, appPath } from '../layout.js';
import { registerPlanRoutes } from './plans.js';

type App = Hono<{ Variables: { console: ConsoleRequest } }>;

/** The developer's apps, and a form to create one (a session begun with an API key cannot). */
export const AppList: FC<{ apps: Array<{ id: string; name: string }>; csrf: string; canCreate: boolean }> = (
  p,
) => (
  <>
    <h1>Apps</h1>
    <Card title="Your apps">
      {p.apps.length === 0 ? (
        <p class="empty">No apps yet.</p>
      ) : (
        <ul>
          {p.apps.map((a) => (
            <li>
              <a href={appPath(a.id)}>{a.name}</a> <code>{a.id}</code>
            </li>
          ))}
        </ul>
      )}
    </Card>
    {p.canCreate ? (
      <Card title="Create an app" id="create-app">
        <PostForm action="/console/apps" csrf={p.csrf} class="stack" label="Create an app">
          <label>
            Name
            <input name="name" required maxlength={100} />
          </label>
          <label>
            Redirect URIs <span class="hint">one per line; https, or http on 127.0.0.1 / localhost</span>
            <textarea name="redirect_uris" placeholder="http://127.0.0.1:3000/callback"></textarea>
          </label>
          <div>
            <button type="submit">Create app</button>
          </div>
        </PostForm>
      </Card>
    ) : null}
  </>
);

const lines = (text: string) =>
  text
    .split(/[\r\n]+/)
    .map((l) => l.trim())
    .filter(Boolean);

/** The overview: credentials, URLs, webhook secret, payment account. */
const Overview: FC<{ app: AppView; csrf: string; payouts: Record<string, unknown> | undefined }> = ({
  app,
  csrf,
  payouts,
}) => (
  <>
    <h1>{app.name}</h1>
    <div class="grid">
      <Card title="Credentials" id="credentials">
        <Fields
          rows={[
            ['App id', <code>{app.id}</code>],
            ['Client id', <code id="client-id">{app.client_id}</code>],
            ['Client secret', <span class="muted">hidden (shown once when created or rotated)</span>],
            ['Webhook secret', <span class="muted">hidden (shown once when rotated)</span>],
            ['Created', app.created_at],
          ]}
        />
        <p>
          <PostForm action={appPath(app.id, '/client-secret')} csrf={csrf} label="Rotate the client secret">
            <button type="submit" class="secondary">
              Rotate client secret
            </button>
          </PostForm>{' '}
          <PostForm action={appPath(app.id, '/webhook-secret')} csrf={csrf} label="Rotate the webhook secret">
            <button type="submit" class="secondary">
              Rotate webhook secret
            </button>
          </PostForm>
        </p>
      </Card>
      <Card title="Payment account" id="payouts">
        {payouts === undefined ? (
          <p class="empty">This sandbox has no payment accounts.</p>
        ) : (
          <>
            <Fields
              rows={Object.entries(payouts)
                .filter(([, v]) => typeof v !== 'object' || v === null)
                .map(([k, v]) => [k.replace(/_/g, ' '), v === null ? '—' : String(v)])}
            />
            {payouts.linked === false || payouts.status === 'not_linked' ? (
              <PostForm action={appPath(app.id, '/payouts/link')} csrf={csrf} label="Link a payment account">
                <button type="submit">Link a payment account</button>
              </PostForm>
            ) : null}
          </>
        )}
      </Card>
    </div>
    <Card title="Settings" id="settings">
      <PostForm action={appPath(app.id, '/settings')} csrf={csrf} class="stack" label="App settings">
        <label>
          Name
          <input name="name" value={app.name} required maxlength={100} />
        </label>
        <label>
          Redirect URIs <span class="hint">one per line</span>
          <textarea name="redirect_uris">{app.redirect_uris.join('\n')}</textarea>
        </label>
        <label>
          Webhook URL <span class="hint">where deliveries go; empty for none</span>
          <input name="webhook_url" type="url" value={app.webhook_url ?? ''} />
        </label>
        <label>
          Embed URL <span class="hint">the app inside the dashboard (Preview); empty for none</span>
          <input name="embed_url" type="url" value={app.embed_url ?? ''} />
        </label>
        <div>
          <button type="submit">Save settings</button>
        </div>
      </PostForm>
    </Card>
  </>
);

interface KeyView {
  id: string;
  mode: string;
  last4: string;
  created_at: string;
}

const KeysPage: FC<{ app: AppView; keys: KeyView[]; csrf: string }> = ({ app, keys, csrf }) => (
  <>
    <h1>API keys</h1>
    <Card title="Keys" id="keys">
      {keys.length === 0 ? (
        <p class="empty">No keys.</p>
      ) : (
        <div class="table-wrap" tabindex={0}>
          <table>
            <caption class="vh">API keys of {app.name}</caption>
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Mode</th>
                <th scope="col">Ends with</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="vh">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <tr>
                  <td class="mono">{k.id}</td>
                  <td>{k.mode}</td>
                  <td class="mono">…{k.last4}</td>
                  <td>{k.created_at}</td>
                  <td>
                    <PostForm
                      action={appPath(app.id, `/keys/${encodeURIComponent(k.id)}/revoke`)}
                      csrf={csrf}
                    >
                      <button type="submit" class="danger" aria-label={`Revoke ${k.id}`}>
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
    <Card title="Create a key" id="create-key">
      <PostForm action={appPath(app.id, '/keys')} csrf={csrf} class="row" label="Create a key">
        <label>
          Mode
          <select name="mode">
            <option value="test">test</option>
            <option value="live">live</option>
          </select>
        </label>
        <button type="submit">Create key</button>
      </PostForm>
    </Card>
  </>
);

/** Apps, their settings and secrets, plans and keys. */
export function registerAppRoutes(app: App): void {
  app.post('/console/apps', async (c) => {
    const r = c.get('console');
    const answer = await r.api.call<AppView & { client_secret?: string }>('POST', '/apps', {
      name: await field(r, 'name'),
      redirect_uris: lines(await field(r, 'redirect_uris')),
    });
    const created = answer.data;
    r.session.flash = outcome(
      answer,
      `Created ${created?.name ?? 'the app'}.`,
      created?.client_secret ? { label: 'Client secret', value: created.client_secret } : undefined,
    );
    return c.redirect(answer.error ? '/console' : appPath(created.id), 303);
  });

  app.get('/console/apps/:app', async (c) => {
    const r = c.get('console');
    const current = scopedApp(r);
    const payouts = await r.api.get<Record<string, unknown>>(
      `/apps/${encodeURIComponent(current.id)}/payouts`,
    );
    return render(r, { title: current.name, app: current, tab: 'overview' }, (csrf) => (
      <Overview app={current} csrf={csrf} payouts={payouts.status === 200 ? payouts.data : undefined} />
    ));
  });

  app.post('/console/apps/:app/settings', async (c) => {
    const r = c.get('console');
    const id = c.req.param('app');
    return act(r, appPath(id), async () => {
      const url = async (name: string) => (await field(r, name)) || null;
      const answer = await r.api.call('PATCH', `/apps/${encodeURIComponent(id)}`, {
        name: await field(r, 'name'),
        redirect_uris: lines(await field(r, 'redirect_uris')),
        webhook_url: await url('webhook_url'),
        embed_url: await url('embed_url'),
      });
      return outcome(answer, 'Saved the settings.');
    });
  });

  app.post('/console/apps/:app/client-secret', async (c) => {
    const r = c.get('console');
    const id = c.req.param('app');
    return act(r, appPath(id), async () => {
      const answer = await r.api.call<{ client_secret?: string }>(
        'POST',
        `/apps/${encodeURIComponent(id)}/client-secret`,
      );
      const value = answer.data?.client_secret;
      return outcome(
        answer,
        'Rotated the client secret; the old one no longer works.',
        value ? { label: 'New client secret', value } : undefined,
      );
    });
  });

  app.post('/console/apps/:app/webhook-secret', async (c) => {
    const r = c.get('console');
    const id = c.req.param('app');
    return act(r, appPath(id), async () => {
      const answer = await r.api.call<{ webhook_secret?: string }>(
        'POST',
        `/apps/${encodeURIComponent(id)}/webhook-secret`,
      );
      const value = answer.data?.webhook_secret;
      return outcome(
        answer,
        'Rotated the webhook secret; deliveries are signed with the new one.',
        value ? { label: 'New webhook secret', value } : undefined,
      );
    });
  });

  app.post('/console/apps/:app/payouts/link', async (c) => {
    const r = c.get('console');
    const id = c.req.param('app');
    const answer = await r.api.call<{ url?: string }>('POST', `/apps/${encodeURIComponent(id)}/payouts/link`);
    const url = answer.data?.url;
    // Only the sandbox's own connect page is followed.
    if (!answer.error && typeof url === 'string' && url.startsWith(`${r.deps.siteUrl()}/`))
      return c.redirect(url, 303);
    return act(r, appPath(id), async () => outcome(answer, 'The payment account could not be linked.'));
  });

  app.get('/console/apps/:app/keys', async (c) => {
    const r = c.get('console');
    const current = scopedApp(r);
    const keys = await r.api.list<KeyView>(`/apps/${encodeURIComponent(current.id)}/keys?limit=100`);
    return render(r, { title: 'API keys', app: current, tab: 'keys' }, (csrf) => (
      <KeysPage app={current} keys={keys} csrf={csrf} />
    ));
  });

  app.post('/console/apps/:app/keys', async (c) => {
    const r = c.get('console');
    const id = c.req.param('app');
    return act(r, appPath(id, '/keys'), async () => {
      const answer = await r.api.call<{ id?: string; key?: string }>(
        'POST',
        `/apps/${encodeURIComponent(id)}/keys`,
        {
          mode: await field(r, 'mode'),
        },
      );
      const value = answer.data?.key;
      return outcome(
        answer,
        `Created key ${answer.data?.id ?? ''}.`,
        value ? { label: 'New API key', value } : undefined,
      );
    });
  });

  app.post('/console/apps/:app/keys/:key/revoke', async (c) => {
    const r = c.get('console');
    const id = c.req.param('app');
    const key = c.req.param('key');
    return act(r, appPath(id, '/keys'), async () =>
      outcome(
        await r.api.call('DELETE', `/apps/${encodeURIComponent(id)}/keys/${encodeURIComponent(key)}`),
        `Revoked ${key}.`,
      ),
    );
  });

  registerPlanRoutes(app);
}
