// A marketplace app: Sign-in with the marketplace, a paid feature behind an entitlement
// check, a webhook route that verifies every delivery, and the page the dashboard embeds.
import { randomBytes } from 'node:crypto';
import { serve } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { html } from 'hono/html';
import {
  appUrl,
  checkContextToken,
  checkWebhook,
  finishSignIn,
  mayUsePaidFeature,
  settings,
  startSignIn,
  whoami,
  type User,
} from './marketplace.ts';

const appName = process.env.APP_NAME ?? 'Marketplace app';

// In memory for the template: use your database in production.
const sessions = new Map<string, { user: User; token: string }>();
const seen = new Set<string>();

const page = (title: string, body: unknown) =>
  html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <title>${title} · ${appName}</title>
      </head>
      <body>
        <main>
          <h1>${title}</h1>
          ${body}
        </main>
      </body>
    </html>`;

const app = new Hono();
const session = (c: Context) => sessions.get(getCookie(c, 'sid') ?? '');

app.get('/', (c) => {
  const s = session(c);
  if (!s) return c.html(page(appName, html`<p><a href="/login">Sign in with the marketplace</a></p>`));
  return c.html(
    page(
      appName,
      html`<p>Signed in as <strong>${s.user.name}</strong> (${s.user.email}).</p>
        <p><a href="/reports">Reports</a> (a paid feature)</p>
        <form method="post" action="/logout"><button>Sign out</button></form>`,
    ),
  );
});

app.get('/login', async (c) => {
  const { url, state, verifier } = await startSignIn();
  // Bound to this browser: the callback must come back with the same state.
  setCookie(c, 'signin', `${state}.${verifier}`, {
    httpOnly: true,
    sameSite: 'Lax',
    path: '/callback',
    maxAge: 600,
  });
  return c.redirect(url);
});

app.get('/callback', async (c) => {
  const [state, verifier] = (getCookie(c, 'signin') ?? '').split('.');
  deleteCookie(c, 'signin', { path: '/callback' });
  if (c.req.query('error')) return c.html(page('Not signed in', html`<p>${c.req.query('error')}</p>`), 403);
  if (!state || c.req.query('state') !== state)
    return c.html(
      page(
        'Not signed in',
        html`<p>The sign-in expired or came from elsewhere: <a href="/login">try again</a>.</p>`,
      ),
      400,
    );
  const token = await finishSignIn(c.req.query('code') ?? '', verifier!);
  const user = await whoami(token);
  if (!user) return c.html(page('Not signed in', html`<p>The marketplace does not know this user.</p>`), 403);
  const sid = randomBytes(24).toString('base64url');
  sessions.set(sid, { user, token });
  setCookie(c, 'sid', sid, { httpOnly: true, sameSite: 'Lax', path: '/' });
  return c.redirect('/');
});

app.post('/logout', (c) => {
  sessions.delete(getCookie(c, 'sid') ?? '');
  deleteCookie(c, 'sid', { path: '/' });
  return c.redirect('/');
});

// The paid feature: the entitlement is asked at each use, so a plan change applies at once.
app.get('/reports', async (c) => {
  const s = session(c);
  if (!s) return c.redirect('/login');
  if (!(await mayUsePaidFeature(s.token)))
    return c.html(
      page(
        'Upgrade to use reports',
        html`<p>Your plan does not include <code>${settings.paidFeature}</code>.</p>`,
      ),
      402,
    );
  return c.html(page('Reports', html`<p>Here are your reports, ${s.user.name}.</p>`));
});

// Webhooks: the signature is checked over the raw bytes before anything else; the answer is fast,
// and a delivery id seen before is acknowledged without doing the work twice.
app.post('/webhooks', async (c) => {
  const raw = Buffer.from(await c.req.arrayBuffer());
  const check = checkWebhook(raw, c.req.header('x-marketplace-signature'));
  if (!check.ok) {
    console.warn(`webhook refused: ${check.reason}`);
    return c.text(check.reason, 401);
  }
  const id = c.req.header('x-marketplace-delivery') ?? '';
  if (!seen.has(id)) {
    seen.add(id);
    const { event, data } = check.envelope;
    console.log(`webhook verified: ${event} ${JSON.stringify(data)}`);
  }
  return c.body(null, 204);
});

// The page the marketplace's dashboard frames, with a signed context token naming the user.
app.get('/embed', async (c) => {
  try {
    const user = await checkContextToken(c.req.query('context_token') ?? '');
    return c.html(page(appName, html`<p>Embedded for <strong>${user}</strong>.</p>`));
  } catch (err) {
    return c.html(
      page('Not verified', html`<p>The context token does not verify: ${(err as Error).message}</p>`),
      401,
    );
  }
});

serve({ fetch: app.fetch, port: settings.port, hostname: '127.0.0.1' }, () =>
  console.log(`${appName} on ${appUrl}`),
);
