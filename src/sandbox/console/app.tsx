import { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { createMiddleware } from 'hono/factory';
import type { Child } from 'hono/jsx';
import { ConsoleApi } from './api.js';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.js';
import { appPath } from './layout.js';
import { AppList, registerAppRoutes } from './routes/apps.js';
import { registerDeliveryRoutes } from './routes/deliveries.js';
import { registerLogRoutes } from './routes/logs.js';
import { registerSimulatorRoutes } from './routes/simulator.js';
import { CONSOLE_SESSION_MS } from './sessions.js';
import { render, visibleApps, type AppView, type ConsoleDeps, type ConsoleRequest } from './request.js';

type Vars = { Variables: { console: ConsoleRequest } };

const cookieName = (port: number) => `mkt_console_${port}`;

/** The security headers of every console answer: nothing inline runs, nothing frames the console. */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

/** An HTML page outside the signed-in frame (signed out, refused). */
function plainPage(title: string, body: Child) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · mkt console`}</title>
        <link rel="stylesheet" href="/console/assets/console.css" />
      </head>
      <body>
        <header class="top">
          <span class="brand">mkt sandbox · Developer console</span>
        </header>
        <main id="main">
          <section class="card">
            <h1>{title}</h1>
            {body}
          </section>
        </main>
      </body>
    </html>
  );
}

/** The page of a browser without a (live) session. */
const signInPage = () =>
  plainPage(
    'Sign in to the console',
    <p>
      You are not signed in (or your session ended). Run <code>mkt sandbox console</code> for a one-time
      sign-in link.
    </p>,
  );

/** The developer console under /console: one-time sign-in, sessions, CSRF, and the pages. */
export function createConsoleApp(deps: ConsoleDeps): Hono<Vars> {
  const app = new Hono<Vars>();

  // The Host rule (421) is the sandbox's, applied before the console is reached.
  app.use('*', async (c, next) => {
    await next();
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(k, v);
  });

  app.get('/console/assets/console.css', (c) =>
    c.body(CONSOLE_CSS, 200, { 'content-type': 'text/css; charset=utf-8' }),
  );
  app.get('/console/assets/console.js', (c) =>
    c.body(CONSOLE_JS, 200, { 'content-type': 'text/javascript; charset=utf-8' }),
  );

  app.get('/console/enter', (c) => {
    const session = deps.sessions.redeem(c.req.query('ticket') ?? '');
    if (!session) {
      return c.html(
        plainPage(
          'This sign-in link does not work',
          <p>
            A console link works once, within 5 minutes. Get a new one with <code>mkt sandbox console</code>.
          </p>,
        ),
        403,
      );
    }
    setCookie(c, cookieName(deps.port()), session.id, {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/console',
      maxAge: Math.floor(CONSOLE_SESSION_MS / 1000),
    });
    // A navigation another site began (the launch file of `mkt sandbox console` is a file: page) does
    // not carry a SameSite=Strict cookie through a redirect: the console is then reached by a
    // navigation of this page's own, which does.
    const from = c.req.header('sec-fetch-site');
    if (from !== 'cross-site' && from !== 'same-site') return c.redirect('/console', 303);
    c.header('refresh', '0;url=/console');
    return c.html(plainPage('Signed in', <a href="/console">Continue to the console</a>));
  });

  // Everything below needs a session; a form also needs its one-time token.
  app.use('*', async (c, next) => {
    const session = deps.sessions.session(getCookie(c, cookieName(deps.port())));
    if (!session) return c.html(signInPage(), 401);
    if (c.req.method === 'POST') {
      const origin = c.req.header('origin');
      const form = await c.req.parseBody();
      const sameOrigin = origin === undefined || origin === `http://${c.req.header('host')}`;
      if (!sameOrigin || !deps.sessions.spendFormToken(session, form.csrf)) {
        return c.html(
          plainPage(
            'Refused: this form was not sent from this page',
            <p>
              Each console form works once, from the page that showed it.{' '}
              <a href="/console">Reload the console</a> and try again.
            </p>,
          ),
          403,
        );
      }
    }
    // The credential behind the session can die under it (a revoked key, an expired or revoked token):
    // the first 401 from the API ends the session, and the browser is asked to sign in again.
    let credentialGone = false;
    const api = new ConsoleApi(deps.transport, `${deps.siteUrl()}/api/v1`, session.principal.headers, () => {
      credentialGone = true;
    });
    c.set('console', { c, session, api, deps });
    await next();
    if (credentialGone) {
      deps.sessions.end(session);
      c.res = undefined;
      c.res = await c.html(signInPage(), 401);
    }
  });

  // The one authority check: every method on every route under /console/apps/:app, before its handler.
  // (Hono's '/console/apps/:app/*' also matches '/console/apps/:app' itself.)
  app.use('/console/apps/:app/*', appScope);

  app.post('/console/sign-out', async (c) => {
    const r = c.get('console');
    deps.sessions.end(r.session);
    // The session's credential dies with it (a key's session holds no credential of its own).
    if (r.session.principal.token) await r.api.call('DELETE', '/console/session');
    deleteCookie(c, cookieName(deps.port()), { path: '/console' });
    return c.html(
      plainPage(
        'Signed out',
        <p>
          Run <code>mkt sandbox console</code> to sign in again.
        </p>,
      ),
    );
  });

  app.get('/console', async (c) => {
    const r = c.get('console');
    const apps = await visibleApps(r);
    // A session begun with an app's key has that app only; a developer sees the list (and can create one).
    const only = r.session.principal.appId;
    if (only) return c.redirect(appPath(only), 303);
    return render(r, { title: 'Apps' }, (csrf) => (
      <AppList apps={apps} csrf={csrf} canCreate={!r.session.principal.appId} />
    ));
  });

  app.get('/console/switch', (c) => c.redirect(appPath(c.req.query('app') ?? ''), 303));

  registerAppRoutes(app);
  registerSimulatorRoutes(app);
  registerDeliveryRoutes(app);
  registerLogRoutes(app);
  return app;
}

/**
 * The scope check (docs/DECISIONS.md, "What a console session may do"): the app in the path must be
 * one the session's own credential may manage. A key's session reaches its key's app only; otherwise
 * the API answers with the session's credential, so the console can never reach further than the
 * credential could alone. Whatever the session may not see is a 404, as if absent, on every method.
 */
const appScope = createMiddleware<Vars>(async (c, next) => {
  const r = c.get('console');
  const id = c.req.param('app') ?? '';
  const only = r.session.principal.appId;
  const answer =
    only !== null && only !== id ? undefined : await r.api.get<AppView>(`/apps/${encodeURIComponent(id)}`);
  if (answer === undefined || answer.error) {
    const missing = answer === undefined || answer.status === 403 || answer.status === 404;
    return render(
      r,
      { title: 'Not available', status: missing ? 404 : answer.status },
      <p class="flash error">{missing ? `No app "${id}" here.` : answer.error!.message}</p>,
    );
  }
  r.app = answer.data;
  await next();
});
