import { Hono } from 'hono';
import { createHmac } from 'node:crypto';
import type { SandboxEnv } from '../http/env.js';
import { Layout, page } from '../http/layout.js';
import { SandboxApiError } from '../http/problem.js';
import type { AppRecord, UserRecord } from '../storage/records.js';

/** Embedded-app context tokens live five minutes. */
export const CONTEXT_TOKEN_TTL_S = 300;

/** A short-lived context token for an embedded app: base64url(JSON payload) "." base64url(HMAC). */
export function signContextToken(secret: string, payload: Record<string, unknown>): string {
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('base64url');
  return `${body}.${mac}`;
}

const notFound = (message: string) => new SandboxApiError(404, 'not_found', message);

const ENDPOINTS: Array<[string, string]> = [
  ['GET /oauth/authorize', 'consent page (Authorization Code + PKCE)'],
  ['GET /.well-known/oauth-authorization-server', 'authorization server metadata (RFC 8414)'],
  ['POST /api/oauth/token, /api/v1/oauth/token', 'token exchange and refresh'],
  ['GET /api/v1/whoami', 'profile of the token user or key owner'],
  ['GET /api/v1/entitlements', 'entitlement (token, or API key + ?user_id=)'],
  ['/api/v1/apps…', 'apps, plans, keys, secrets'],
  ['/api/v1/simulator/…', 'test users, events, authorizations, entitlement checks'],
  ['GET /api/v1/apps/{app_id}/webhooks/stream', 'webhook relay (Server-Sent Events)'],
  ['GET /dashboard/apps/{app_id}?user_id=…', 'embedded app'],
];

/** The index page: endpoints and the seeded app. */
function IndexPage(props: { siteUrl: string; app: AppRecord | undefined }) {
  const { app } = props;
  return (
    <Layout title="Sandbox">
      <h1>mkt sandbox marketplace</h1>
      <p>
        Site URL <code>{props.siteUrl}</code>, API base <code>{props.siteUrl}/api/v1</code>.
      </p>
      <h2>Endpoints</h2>
      <ul>
        {ENDPOINTS.map(([p, d]) => (
          <li>
            <code>{p}</code> — {d}
          </li>
        ))}
      </ul>
      {app && (
        <>
          <h2>Seeded app</h2>
          <p>
            <strong>{app.name}</strong> (<code>{app.id}</code>), client id <code>{app.client_id}</code>,
            redirect URIs{' '}
            {app.redirect_uris.map((u, i) => (
              <>
                {i > 0 && ', '}
                <code>{u}</code>
              </>
            ))}
            .
          </p>
        </>
      )}
    </Layout>
  );
}

/** The dashboard page that embeds an app, or says that it has no embed URL. */
function DashboardPage(props: { app: AppRecord; user: UserRecord; frameUrl: string | null }) {
  const { app, user, frameUrl } = props;
  return (
    <Layout title={app.name}>
      <h1>{app.name}</h1>
      <p>
        Signed in as {user.name} (<code>{user.id}</code>)
      </p>
      {frameUrl === null ? (
        <p id="no-embed">
          This app has no embed URL. Set one with{' '}
          <code>mkt apps update {app.id} --embed-url &lt;url&gt;</code>.
        </p>
      ) : (
        <iframe
          id="app-frame"
          title={app.name}
          src={frameUrl}
          sandbox="allow-scripts allow-forms allow-same-origin allow-popups"
        ></iframe>
      )}
    </Layout>
  );
}

/** A user picker for the dashboard when no `user_id` was given. */
function PickUserPage(props: { app: AppRecord; users: UserRecord[] }) {
  return (
    <Layout title={props.app.name}>
      <h1>{props.app.name}</h1>
      <p>Open the app as:</p>
      <ul>
        {props.users.map((u) => (
          <li>
            <a href={`?user_id=${encodeURIComponent(u.id)}`}>
              {u.name} ({u.id})
            </a>
          </li>
        ))}
      </ul>
    </Layout>
  );
}

/** The index, the embedded-app dashboard and avatars. */
export const dashboardPages = new Hono<SandboxEnv>()
  .get('/', (c) => {
    const { ledger, siteUrl } = c.var.core;
    return page(c, 200, <IndexPage siteUrl={siteUrl} app={ledger.app(ledger.seed.app_id)} />);
  })
  // The embedded app, with a context token in its address.
  .get('/dashboard/apps/:app_id', (c) => {
    const { ledger } = c.var.core;
    const app = ledger.app(c.req.param('app_id'));
    if (!app) throw notFound(`No app "${c.req.param('app_id')}".`);
    const userId = c.req.query('user_id');
    if (userId === undefined || userId === '') {
      const ids = [...ledger.userIds(app.id).slice(0, 50), app.owner_id];
      const users = ids.flatMap((id) => ledger.user(id) ?? []);
      return page(c, 200, <PickUserPage app={app} users={users} />);
    }
    const user = ledger.user(userId);
    if (!user || (user.app_id !== app.id && user.id !== app.owner_id)) {
      throw notFound(`No user "${userId}" on ${app.name}.`);
    }
    if (app.embed_url === null) return page(c, 200, <DashboardPage app={app} user={user} frameUrl={null} />);
    const now = Math.floor(c.var.core.now() / 1000);
    const token = signContextToken(app.client_secret, {
      user_id: user.id,
      app_id: app.id,
      iat: now,
      exp: now + CONTEXT_TOKEN_TTL_S,
    });
    const frame = new URL(app.embed_url);
    frame.searchParams.set('user_id', user.id);
    frame.searchParams.set('app_id', app.id);
    frame.searchParams.set('context_token', token);
    return page(c, 200, <DashboardPage app={app} user={user} frameUrl={frame.toString()} />);
  })
  // The user's initial on a coloured square.
  .get('/avatars/:file', (c) => {
    const user = c.var.core.ledger.user(c.req.param('file').replace(/\.svg$/, ''));
    if (!user) throw notFound('No such avatar.');
    const initial = (
      <text x="32" y="42" font-size="28" text-anchor="middle" fill="#fff" font-family="sans-serif">
        {(user.name.trim()[0] ?? '?').toUpperCase()}
      </text>
    );
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="#5b6ee1"/>${String(initial)}</svg>`;
    return c.body(svg, 200, { 'content-type': 'image/svg+xml' });
  });
