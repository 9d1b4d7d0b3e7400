import type { Child, FC, PropsWithChildren } from 'hono/jsx';
import type { Flash } from './sessions.js';

/** What every console page knows: the apps it may show, the current one, the tab and the form token. */
export interface PageFrame {
  title: string;
  apps: Array<{ id: string; name: string }>;
  app?: { id: string; name: string };
  tab?: Tab;
  /** The one-time anti-CSRF token every form of this page carries. */
  csrf: string;
  flash?: Flash;
  /** Who the console acts as, for the header. */
  who: string;
}

/** The tabs of an app, in order, with their paths below /console/apps/{id}. */
export const TABS = [
  ['overview', 'Overview', ''],
  ['plans', 'Plans', '/plans'],
  ['keys', 'API keys', '/keys'],
  ['simulator', 'Simulator', '/simulator'],
  ['deliveries', 'Deliveries', '/deliveries'],
  ['logs', 'Request log', '/logs'],
  ['preview', 'Preview', '/preview'],
] as const;

export type Tab = (typeof TABS)[number][0];

/** The path of an app's tab. */
export const appPath = (appId: string, sub = '') => `/console/apps/${encodeURIComponent(appId)}${sub}`;

/** The page frame: header, the app's tabs, the flash message (with a secret shown once) and the content. */
export const Page: FC<PropsWithChildren<{ frame: PageFrame }>> = ({ frame, children }) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="same-origin" />
      <title>{`${frame.title} · mkt console`}</title>
      <link rel="stylesheet" href="/console/assets/console.css" />
    </head>
    <body>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/console">
          mkt sandbox · Developer console
        </a>
        {frame.apps.length > 1 ? (
          <form method="get" action="/console/switch" class="inline">
            <label for="app-switch" class="vh">
              App
            </label>
            <select name="app" id="app-switch">
              {frame.apps.map((a) => (
                <option value={a.id} selected={a.id === frame.app?.id}>
                  {a.name}
                </option>
              ))}
            </select>{' '}
            <button type="submit" class="secondary">
              Open
            </button>
          </form>
        ) : null}
        <div class="who">
          <span>{frame.who}</span>
          <form method="post" action="/console/sign-out">
            <input type="hidden" name="csrf" value={frame.csrf} />
            <button type="submit">Sign out</button>
          </form>
        </div>
      </header>
      {frame.app ? (
        <nav class="tabs" aria-label="App sections">
          <span class="app-name">{frame.app.name}</span>
          {TABS.map(([id, label, sub]) => (
            <a href={appPath(frame.app!.id, sub)} aria-current={frame.tab === id ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
      ) : null}
      <main id="main">
        {frame.flash ? <FlashBox flash={frame.flash} /> : null}
        {children}
      </main>
      <script src="/console/assets/console.js" defer></script>
    </body>
  </html>
);

const FlashBox: FC<{ flash: Flash }> = ({ flash }) => (
  <div class={`flash ${flash.kind}`} role={flash.kind === 'error' ? 'alert' : 'status'} id="flash">
    <p class="flash-text">{flash.message}</p>
    {flash.secret ? (
      <div class="secret" id="revealed-secret">
        <strong>{flash.secret.label}</strong> (shown once; copy it now):
        <br />
        <code>{flash.secret.value}</code>
      </div>
    ) : null}
  </div>
);

/** A form that posts to the console with the page's anti-CSRF token. */
export const PostForm: FC<
  PropsWithChildren<{ action: string; csrf: string; class?: string; label?: string }>
> = (p) => (
  <form method="post" action={p.action} class={p.class ?? 'inline'} aria-label={p.label}>
    <input type="hidden" name="csrf" value={p.csrf} />
    {p.children}
  </form>
);

/** A card with a heading. */
export const Card: FC<PropsWithChildren<{ title: string; id?: string }>> = ({ title, id, children }) => (
  <section class="card" aria-labelledby={id ? `${id}-h` : undefined} id={id}>
    <h2 id={id ? `${id}-h` : undefined}>{title}</h2>
    {children}
  </section>
);

/** Label: value rows. */
export const Fields: FC<{ rows: Array<[string, Child]> }> = ({ rows }) => (
  <dl class="fields">
    {rows.map(([k, v]) => (
      <>
        <dt>{k}</dt>
        <dd>{v ?? <span class="muted">—</span>}</dd>
      </>
    ))}
  </dl>
);

/** A state or status as a coloured badge (the colour is never the only signal: the word is there). */
export const Badge: FC<{ text: string | number }> = ({ text }) => {
  const t = String(text);
  const n = Number(t);
  const cls =
    /^(succeeded|active|ok|allowed|linked|trialing)$/.test(t) || (n >= 200 && n < 400)
      ? 's-ok'
      : /^(pending|past_due|cancelled)$/.test(t) || (n >= 400 && n < 500)
        ? 's-warn'
        : /^(failed|expired|declined|denied)$/.test(t) || n >= 500
          ? 's-bad'
          : 's-muted';
  return <span class={`badge ${cls}`}>{t}</span>;
};
