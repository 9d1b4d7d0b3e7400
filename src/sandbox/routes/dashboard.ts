import { createHmac } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SandboxCore } from '../core.js';
import { errorPage, escapeHtml, layout } from '../http/html.js';
import { sendHtml } from '../http/send.js';
import type { AppRecord, UserRecord } from '../storage/records.js';

/** Embedded-app context tokens live five minutes. */
export const CONTEXT_TOKEN_TTL_S = 300;

/** A short-lived context token for an embedded app: base64url(JSON payload) "." base64url(HMAC). */
export function signContextToken(secret: string, payload: Record<string, unknown>): string {
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('base64url');
  return `${body}.${mac}`;
}

/** `GET /`: the endpoints and the seeded app. */
export function index(core: SandboxCore, _req: IncomingMessage, res: ServerResponse): void {
  sendHtml(res, 200, indexPage(core.siteUrl, core.ledger.app(core.ledger.seed.app_id)));
}

/** `GET /dashboard/apps/{id}?user_id=…`: the embedded app, with a context token in its address. */
export function dashboard(
  core: SandboxCore,
  _req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  params: Record<string, string>,
): void {
  const app = core.ledger.app(params.app_id!);
  if (!app) return sendHtml(res, 404, errorPage('Not found', 'not_found', `No app "${params.app_id}".`));
  const userId = url.searchParams.get('user_id');
  if (userId === null || userId === '') {
    const ids = [...(core.ledger.userIds(app.id) ?? []).slice(0, 50), app.owner_id];
    const users = ids.flatMap((id) => core.ledger.user(id) ?? []);
    return sendHtml(res, 200, pickUserPage(app, users));
  }
  const user = core.ledger.user(userId);
  if (!user || (user.app_id !== app.id && user.id !== app.owner_id)) {
    return sendHtml(res, 404, errorPage('Not found', 'not_found', `No user "${userId}" on ${app.name}.`));
  }
  if (app.embed_url === null) return sendHtml(res, 200, dashboardPage(app, user, null));
  const now = Math.floor(core.now() / 1000);
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
  sendHtml(res, 200, dashboardPage(app, user, frame.toString()));
}

/** `GET /avatars/{user}.svg`: the user's initial on a coloured square. */
export function avatar(
  core: SandboxCore,
  _req: IncomingMessage,
  res: ServerResponse,
  _url: URL,
  params: Record<string, string>,
): void {
  const id = (params.file ?? '').replace(/\.svg$/, '');
  const user = core.ledger.user(id);
  if (!user) return sendHtml(res, 404, errorPage('Not found', 'not_found', 'No such avatar.'));
  const initial = escapeHtml((user.name.trim()[0] ?? '?').toUpperCase());
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="#5b6ee1"/><text x="32" y="42" font-size="28" text-anchor="middle" fill="#fff" font-family="sans-serif">${initial}</text></svg>`;
  res.writeHead(200, { 'content-type': 'image/svg+xml', 'content-length': String(Buffer.byteLength(svg)) });
  res.end(svg);
}

/** The index page: endpoints and the seeded app. */
function indexPage(siteUrl: string, app: AppRecord | undefined): string {
  const rows: Array<[string, string]> = [
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
  const list = rows.map(([p, d]) => `<li><code>${escapeHtml(p)}</code> — ${escapeHtml(d)}</li>`).join('\n');
  const seeded = app
    ? `<h2>Seeded app</h2>
<p><strong>${escapeHtml(app.name)}</strong> (<code>${escapeHtml(app.id)}</code>), client id <code>${escapeHtml(app.client_id)}</code>,
redirect URIs ${app.redirect_uris.map((u) => `<code>${escapeHtml(u)}</code>`).join(', ')}.</p>`
    : '';
  return layout(
    'Sandbox',
    `<h1>mkt sandbox marketplace</h1>
<p>Site URL <code>${escapeHtml(siteUrl)}</code>, API base <code>${escapeHtml(siteUrl)}/api/v1</code>.</p>
<h2>Endpoints</h2>
<ul>
${list}
</ul>
${seeded}`,
  );
}

/** The dashboard page that embeds an app, or says that it has no embed URL. */
function dashboardPage(app: AppRecord, user: UserRecord, frameUrl: string | null): string {
  const main =
    frameUrl === null
      ? `<p id="no-embed">This app has no embed URL. Set one with <code>mkt apps update ${escapeHtml(app.id)} --embed-url &lt;url&gt;</code>.</p>`
      : `<iframe id="app-frame" title="${escapeHtml(app.name)}" src="${escapeHtml(frameUrl)}" sandbox="allow-scripts allow-forms allow-same-origin allow-popups"></iframe>`;
  return layout(
    app.name,
    `<h1>${escapeHtml(app.name)}</h1>
<p>Signed in as ${escapeHtml(user.name)} (<code>${escapeHtml(user.id)}</code>)</p>
${main}`,
  );
}

/** A user picker for the dashboard when no `user_id` was given. */
function pickUserPage(app: AppRecord, users: UserRecord[]): string {
  const links = users
    .map(
      (u) =>
        `<li><a href="?user_id=${encodeURIComponent(u.id)}">${escapeHtml(u.name)} (${escapeHtml(u.id)})</a></li>`,
    )
    .join('\n');
  return layout(app.name, `<h1>${escapeHtml(app.name)}</h1>\n<p>Open the app as:</p>\n<ul>\n${links}\n</ul>`);
}
