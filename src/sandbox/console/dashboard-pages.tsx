import { Hono } from 'hono';
import { z } from 'zod';
import { createRoute, openapi } from '../kernel/http/declare.js';
import { pageAnswer, pageErrors, PUBLIC } from '../kernel/http/responses.js';
import { recordId } from '../kernel/shapes.js';
import type { SandboxEnv } from '../kernel/http/env.js';
import { Layout, page } from '../kernel/http/layout.js';
import { SandboxApiError } from '../kernel/http/problem.js';
import type { AppRecord, UserRecord } from '../kernel/storage/records.js';
import { CONTEXT_TOKEN_PARAM, signContextToken } from '../../wire/context-token.js';
import { PREVIEW_PARAM } from './preview-passes.js';
import { ConsoleRoom } from './room.js';

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
  ['GET /dashboard/apps/{app_id}?preview=…&user_id=…', 'embedded app (a link from mkt apps preview)'],
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
function PickUserPage(props: { app: AppRecord; users: UserRecord[]; pass: string }) {
  return (
    <Layout title={props.app.name}>
      <h1>{props.app.name}</h1>
      <p>Open the app as:</p>
      <ul>
        {props.users.map((u) => (
          <li>
            <a href={`?${new URLSearchParams({ [PREVIEW_PARAM]: props.pass, user_id: u.id })}`}>
              {u.name} ({u.id})
            </a>
          </li>
        ))}
      </ul>
    </Layout>
  );
}

/** The index, the embedded-app dashboard and avatars. */
const home = createRoute({
  method: 'get',
  path: '/',
  summary: 'The sandbox home page',
  security: PUBLIC,
  responses: { 200: pageAnswer('The sandbox home page'), ...pageErrors(400) },
});

const dashboard = createRoute({
  method: 'get',
  path: '/dashboard/apps/{app_id}',
  summary: "The marketplace dashboard with the app's embedded page (a preview link's holder only)",
  security: PUBLIC,
  request: {
    params: z.strictObject({ app_id: recordId('app') }),
    query: z.object({
      [PREVIEW_PARAM]: z.string().meta({ description: 'The preview pass of `mkt apps preview`' }),
      user_id: z.string().meta({ description: 'The user the app is shown to' }).optional(),
    }),
  },
  responses: {
    200: pageAnswer("The dashboard (or the choice of a user), framing the app's embed URL"),
    ...pageErrors(400, 404),
  },
});

const avatar = createRoute({
  method: 'get',
  path: '/avatars/{file}',
  summary: "A user's avatar",
  security: PUBLIC,
  request: { params: z.strictObject({ file: z.string().regex(/^usr_[A-Za-z0-9_-]{1,60}\.svg$/) }) },
  responses: {
    200: {
      description: "The user's initial on a coloured square",
      headers: z.object({ 'X-Request-Id': z.string() }),
      content: { 'image/svg+xml': { schema: z.string() } },
    },
    ...pageErrors(400, 404),
  },
});

export const dashboardPages = new Hono<SandboxEnv>();

openapi(dashboardPages, home, (c) => {
  const { ledger, siteUrl } = c.get('core');
  return page(c, 200, <IndexPage siteUrl={siteUrl} app={ledger.app(ledger.seed.app_id)} />);
});

// The embedded app, with a signed context token (a JWT) in its address, for the holder of a preview
// pass only (docs/DECISIONS.md §9): an anonymous local caller gets no token, and no page either.
openapi(
  dashboardPages,
  dashboard,
  (c) => {
    const core = c.get('core');
    const { ledger } = core;
    const app = ledger.app(c.req.param('app_id'));
    const pass = c.req.query(PREVIEW_PARAM);
    if (!app || !core.services.get(ConsoleRoom).previews.opens(pass, app.id)) {
      throw notFound(
        'This dashboard link does not work: it needs a preview link, good for an hour. Get one with `mkt apps preview`, or use the console’s Preview.',
      );
    }
    const show = (element: unknown) => page(c, 200, element, { framedBy: 'self' });
    const userId = c.req.query('user_id');
    if (userId === undefined || userId === '') {
      const ids = [...ledger.userIds(app.id).slice(0, 50), app.owner_id];
      const users = ids.flatMap((id) => ledger.user(id) ?? []);
      return show(<PickUserPage app={app} users={users} pass={pass!} />);
    }
    const user = ledger.user(userId);
    if (!user || (user.app_id !== app.id && user.id !== app.owner_id)) {
      throw notFound(`No user "${userId}" on ${app.name}.`);
    }
    if (app.embed_url === null) return show(<DashboardPage app={app} user={user} frameUrl={null} />);
    // A JWT (docs/DECISIONS.md, "Embedded apps"), on transport time: real (or a test's), never business time.
    const token = signContextToken(
      app.client_secret,
      { iss: core.siteUrl, aud: app.client_id, sub: user.id, app_id: app.id },
      core.now() / 1000,
    );
    const frame = new URL(app.embed_url);
    frame.searchParams.set('user_id', user.id);
    frame.searchParams.set('app_id', app.id);
    frame.searchParams.set(CONTEXT_TOKEN_PARAM, token);
    return show(<DashboardPage app={app} user={user} frameUrl={frame.toString()} />);
  },
  { ownRequest: true },
);

// The user's initial on a coloured square.
openapi(dashboardPages, avatar, (c) => {
  const user = c.get('core').ledger.user(c.req.param('file').replace(/\.svg$/, ''));
  if (!user) throw notFound('No such avatar.');
  const initial = (
    <text x="32" y="42" font-size="28" text-anchor="middle" fill="#fff" font-family="sans-serif">
      {(user.name.trim()[0] ?? '?').toUpperCase()}
    </text>
  );
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="#5b6ee1"/>${String(initial)}</svg>`;
  return c.body(svg, 200, { 'content-type': 'image/svg+xml' });
});
