import type { AppRecord, UserRecord } from './store.js';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · mkt sandbox</title>
<style>
body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
code{background:#f2f2f4;padding:0 .25rem;border-radius:3px}
.error{border-left:4px solid #c62828;padding:.5rem 1rem;background:#fdecea}
button{font-size:1rem;padding:.5rem 1.25rem;margin-right:.5rem}
iframe{width:100%;height:70vh;border:1px solid #ccc}
</style>
</head>
<body>
${body}
</body>
</html>
`;
}

/** What each scope lets the application do, in the person's words (docs/DECISIONS.md §2). */
const SCOPE_MEANINGS: Record<string, string> = {
  'identity:read': 'see your name, e-mail address and avatar',
  'entitlements:read': 'see your plan, its status, features and usage',
  'apps:write': 'manage your applications, pricing plans, keys and test events',
};

/** The consent page of `GET /oauth/authorize` (docs/PROTOCOL.md, OAuth). */
export function consentPage(input: {
  app: AppRecord;
  scopes: string[];
  users: UserRecord[];
  hidden: Record<string, string>;
}): string {
  const scopes = input.scopes
    .map((s) => {
      const meaning = SCOPE_MEANINGS[s];
      return `<li><code>${escapeHtml(s)}</code>${meaning ? ` — ${meaning}` : ''}</li>`;
    })
    .join('\n');
  const options = input.users
    .map(
      (u) =>
        `<option value="${escapeHtml(u.id)}">${escapeHtml(u.name)} &lt;${escapeHtml(u.email)}&gt;</option>`,
    )
    .join('\n');
  const hidden = Object.entries(input.hidden)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('\n');
  return layout(
    `Authorize ${input.app.name}`,
    `<h1>Authorize <span id="app-name">${escapeHtml(input.app.name)}</span></h1>
<p>The application asks for these permissions:</p>
<ul id="scopes">
${scopes}
</ul>
<form method="post" action="/oauth/authorize">
${hidden}
<p><label>Sign in as <select name="user_id" id="user_id">
${options}
</select></label></p>
<p><button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button></p>
</form>
<p><small>This is the mkt sandbox: no real users are affected.</small></p>`,
  );
}

/** A request error shown on the page (never redirected). */
export function errorPage(title: string, code: string, message: string): string {
  return layout(
    title,
    `<h1>${escapeHtml(title)}</h1>
<div class="error"><p><strong id="error-code">${escapeHtml(code)}</strong></p><p id="error-message">${escapeHtml(message)}</p></div>`,
  );
}

/** The index page: endpoints and the seeded app. */
export function indexPage(siteUrl: string, app: AppRecord | undefined): string {
  const rows: Array<[string, string]> = [
    ['GET /oauth/authorize', 'consent page (Authorization Code + PKCE)'],
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
export function dashboardPage(app: AppRecord, user: UserRecord, frameUrl: string | null): string {
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
export function pickUserPage(app: AppRecord, users: UserRecord[]): string {
  const links = users
    .map(
      (u) =>
        `<li><a href="?user_id=${encodeURIComponent(u.id)}">${escapeHtml(u.name)} (${escapeHtml(u.id)})</a></li>`,
    )
    .join('\n');
  return layout(app.name, `<h1>${escapeHtml(app.name)}</h1>\n<p>Open the app as:</p>\n<ul>\n${links}\n</ul>`);
}
