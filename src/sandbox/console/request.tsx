import type { Context } from 'hono';
import type { Child } from 'hono/jsx';
import type { ApiAnswer, ApiTransport, ConsoleApi } from './api.js';
import { Page, type PageFrame, type Tab } from './layout.js';
import type { ConsoleSession, ConsoleSessions, Flash } from './sessions.js';

// What the console's pages share (src/sandbox/console/routes/*): the request a handler works with,
// the signed-in frame, and the Post/Redirect/Get of an action. The application is console/app.tsx.

/** Who a console session acts as: the developer, limited to one app when it began with that app's key. */
export interface ConsolePrincipal {
  developerId: string;
  /** The one app a session begun with an API key may see; null: all of the developer's apps. */
  appId: string | null;
  /** The credential the console sends to the API (never shown in a page). */
  headers: Record<string, string>;
  /** The session's own access token, when it has one (a developer's session): sign-out revokes it. */
  token?: string;
  /** Who, in words, for the page header. */
  label: string;
}

/** What the console needs of the sandbox. */
export interface ConsoleDeps {
  sessions: ConsoleSessions<ConsolePrincipal>;
  /** A dashboard link (with its preview pass) for an app the session may see: the Preview tab's frame. */
  previewLink(appId: string, userId: string): { url: string };
  /** Reaches the sandbox API (its own request handler). */
  transport: ApiTransport;
  /** The sandbox's site URL and port, known once it listens. */
  siteUrl(): string;
  port(): number;
}

/** What a console handler works with: the session, the API as the developer, and the apps it may show. */
export interface ConsoleRequest {
  c: Context;
  session: ConsoleSession<ConsolePrincipal>;
  api: ConsoleApi;
  deps: ConsoleDeps;
  /** The app the path names, once the scope check let it through (routes under /console/apps/:app). */
  app?: AppView;
}

/** The apps this session may see (a key's session: its own app only). */
export async function visibleApps(r: ConsoleRequest): Promise<Array<{ id: string; name: string }>> {
  // A key's session has one app; once the scope check read it, asking again would only spend the key's limit.
  if (r.session.principal.appId !== null && r.app) return [r.app];
  const apps = await r.api.list<{ id: string; name: string }>('/apps?limit=100');
  const only = r.session.principal.appId;
  return only ? apps.filter((a) => a.id === only) : apps;
}

/**
 * Renders a page in the signed-in frame with a fresh form token; the flash message (and a secret
 * just created) is shown this once.
 */
export async function render(
  r: ConsoleRequest,
  frame: { title: string; app?: { id: string; name: string }; tab?: Tab; status?: number },
  content: Child | ((csrf: string) => Child),
) {
  const csrf = r.deps.sessions.formToken(r.session);
  const flash = r.session.flash;
  r.session.flash = undefined;
  const full: PageFrame = {
    title: frame.title,
    apps: await visibleApps(r),
    app: frame.app,
    tab: frame.tab,
    csrf,
    flash,
    who: r.session.principal.label,
  };
  const body = typeof content === 'function' ? content(csrf) : content;
  return r.c.html(<Page frame={full}>{body}</Page>, (frame.status ?? 200) as 200);
}

/** The app the path names; only routes under /console/apps/:app, which the scope check (console/app.tsx) let through. */
export function scopedApp(r: ConsoleRequest): AppView {
  if (!r.app) throw new Error(`${r.c.req.path} is not under /console/apps/:app`);
  return r.app;
}

/** An app as the API shows it. */
export interface AppView {
  id: string;
  name: string;
  client_id: string;
  redirect_uris: string[];
  webhook_url: string | null;
  embed_url: string | null;
  created_at: string;
}

/**
 * Runs a console action (after the CSRF check) and sends the browser back with its outcome as the
 * next page's flash message (Post/Redirect/Get: a reload never repeats the action).
 */
export async function act(r: ConsoleRequest, back: string, action: () => Promise<Flash>): Promise<Response> {
  r.session.flash = await action();
  return r.c.redirect(back, 303);
}

/** A flash for an API answer: its error, or `ok` when it worked. */
export function outcome(answer: ApiAnswer, ok: string, secret?: Flash['secret']): Flash {
  if (answer.error) return { kind: 'error', message: `${answer.error.message} (${answer.error.code})` };
  return { kind: 'ok', message: ok, secret };
}

/** A form field as text ('' when missing). */
export async function field(r: ConsoleRequest, name: string): Promise<string> {
  const value = (await r.c.req.parseBody())[name];
  return typeof value === 'string' ? value.trim() : '';
}
