// @ts-check
// A marketplace app: sign-in with the marketplace, a paid feature behind an entitlement check, a
// webhook route that verifies every delivery, and the page the dashboard embeds.
import { pathToFileURL } from 'node:url';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { deleteCookie, getCookie, getSignedCookie, setCookie, setSignedCookie } from 'hono/cookie';
import { html } from 'hono/html';
import {
  appUrl,
  checkContextToken,
  checkWebhook,
  finishSignIn,
  mayUsePaidFeature,
  settings,
  SignInRefused,
  startSignIn,
  whoami,
} from './marketplace.js';

const appName = process.env.APP_NAME ?? 'Marketplace app';

// Delivery ids already handled, in memory for the template: use your database in production.
const seen = new Set();

/** @param {string} title @param {unknown} body */
const page = (title, body) =>
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

/**
 * The signed-in user and their token, from the session cookie (signed with SESSION_SECRET from .env,
 * so a restart or a reload on edit keeps the session).
 * @param {import('hono').Context} c
 * @returns {Promise<{ user: import('./marketplace.js').User, token: string } | undefined>}
 */
async function session(c) {
  const value = await getSignedCookie(c, settings.sessionSecret, 'session');
  if (!value) return undefined;
  try {
    return JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

app.get('/', async (c) => {
  const s = await session(c);
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

const tryAgain = html`<a href="/login">Sign in again</a>`;

app.get('/callback', async (c) => {
  const [state, verifier] = (getCookie(c, 'signin') ?? '').split('.');
  deleteCookie(c, 'signin', { path: '/callback' });
  if (c.req.query('error')) return c.html(page('Not signed in', html`<p>${c.req.query('error')}</p>`), 403);
  if (!state || !verifier || c.req.query('state') !== state)
    return c.html(
      page('Not signed in', html`<p>The sign-in expired or came from elsewhere. ${tryAgain}.</p>`),
      400,
    );
  let token;
  try {
    token = await finishSignIn(c.req.query('code') ?? '', verifier);
  } catch (err) {
    // A code used twice (a reload of this page, the back button) or expired: refused, not a crash.
    if (!(err instanceof SignInRefused)) throw err;
    return c.html(
      page('Not signed in', html`<p>The marketplace refused this sign-in (${err.message}). ${tryAgain}.</p>`),
      400,
    );
  }
  const user = await whoami(token);
  if (!user) return c.html(page('Not signed in', html`<p>The marketplace does not know this user.</p>`), 403);
  const value = Buffer.from(
    JSON.stringify({ user: { id: user.id, name: user.name, email: user.email }, token }),
  ).toString('base64url');
  await setSignedCookie(c, 'session', value, settings.sessionSecret, {
    httpOnly: true,
    sameSite: 'Lax',
    path: '/',
  });
  return c.redirect('/');
});

app.post('/logout', (c) => {
  deleteCookie(c, 'session', { path: '/' });
  return c.redirect('/');
});

// The paid feature: the entitlement is asked at each use, so a plan change applies at once.
app.get('/reports', async (c) => {
  const s = await session(c);
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
// and a delivery id seen before is acknowledged without doing the work twice. An event this app
// does not know is acknowledged too (2xx), so the marketplace does not retry it.
app.post(
  '/webhooks',
  bodyLimit({ maxSize: 1024 * 1024, onError: (c) => c.text('too large', 413) }),
  async (c) => {
    const raw = Buffer.from(await c.req.arrayBuffer());
    const check = checkWebhook(raw, c.req.header('x-marketplace-signature'));
    if (!check.ok) {
      console.warn(`webhook refused: ${check.reason}`);
      return c.text(check.reason, check.status);
    }
    const id = c.req.header('x-marketplace-delivery');
    // A delivery without an id cannot be a duplicate: it is handled.
    if (!id || !seen.has(id)) {
      if (id) seen.add(id);
      const { event, data } = check.envelope;
      console.log(`webhook verified: ${event} ${JSON.stringify(data)}`);
    }
    return c.body(null, 204);
  },
);

// The page the marketplace's dashboard frames, with a signed context token naming the user.
app.get('/embed', async (c) => {
  try {
    const user = await checkContextToken(c.req.query('context_token') ?? '');
    return c.html(page(appName, html`<p>Embedded for <strong>${user}</strong>.</p>`));
  } catch (err) {
    return c.html(
      page(
        'Not verified',
        html`<p>The context token does not verify: ${/** @type {Error} */ (err).message}</p>`,
      ),
      401,
    );
  }
});

export default app;

// Served when run (`npm run dev`, `mkt dev`); the tests import the app without serving it.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  serve({ fetch: app.fetch, port: settings.port, hostname: '127.0.0.1' }, () =>
    console.log(`${appName} on ${appUrl}`),
  );
