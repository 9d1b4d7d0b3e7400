import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiContext, ApiResult, SandboxCore } from '../core.js';
import { ownedApp } from '../http/auth.js';
import { mediaType, readRawBody } from '../http/body.js';
import { invalidRequest } from '../http/errors.js';
import { errorPage, escapeHtml, layout } from '../http/html.js';
import { allowQuery } from '../http/query.js';
import { sendHtml } from '../http/send.js';
import { randomId, secretsEqual } from '../ids.js';

/** How long a connect link may be used, once. */
const LINK_TTL_MS = 10 * 60_000;

/** A pending connect page (memory only: it lives 10 minutes, like an authorization request). */
interface ConnectLink {
  app_id: string;
  csrf: string;
  expires_at: number;
}
const links = new Map<string, ConnectLink>();

/** `GET /apps/{id}/payouts`: the app's payment account. */
export function getPayouts(ctx: ApiContext): ApiResult {
  allowQuery(ctx.url, []);
  const app = ownedApp(ctx, ctx.params.app_id!);
  const p = ctx.core.life.store.payouts(app.id);
  return {
    status: 200,
    body: {
      app_id: app.id,
      linked: p !== undefined,
      account_id: p?.account_id ?? null,
      linked_at: p?.linked_at ?? null,
    },
  };
}

/** `POST /apps/{id}/payouts/link`: the URL of the simulated processor's connect page. */
export function startPayoutsLink(ctx: ApiContext): ApiResult {
  allowQuery(ctx.url, []);
  const app = ownedApp(ctx, ctx.params.app_id!);
  const now = ctx.core.now();
  for (const [id, l] of links) if (l.expires_at <= now) links.delete(id);
  const id = randomId('lnk', 16);
  links.set(id, { app_id: app.id, csrf: randomId('csrf', 16), expires_at: now + LINK_TTL_MS });
  return {
    status: 201,
    body: {
      url: `${ctx.core.siteUrl}/payouts/connect/${id}`,
      expires_at: new Date(now + LINK_TTL_MS).toISOString(),
    },
  };
}

/** `GET /apps/{id}/payments?user_id=`: every charge, oldest first. */
export function listPayments(ctx: ApiContext): ApiResult {
  allowQuery(ctx.url, ['user_id', 'limit', 'cursor']);
  const app = ownedApp(ctx, ctx.params.app_id!);
  const limitText = ctx.url.searchParams.get('limit') ?? '20';
  if (!/^\d{1,3}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > 100) {
    throw invalidRequest('Query parameter "limit" must be an integer from 1 to 100.');
  }
  const cursor = ctx.url.searchParams.get('cursor');
  if (cursor !== null && !/^\d{1,15}$/.test(cursor))
    throw invalidRequest('Query parameter "cursor" is not a cursor this server issued.');
  const limit = Number(limitText);
  const rows = ctx.core.life.store.payments(app.id, {
    userId: ctx.url.searchParams.get('user_id') ?? undefined,
    after: Number(cursor ?? 0),
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return {
    status: 200,
    body: {
      data: page.map(({ cursor: _c, app_id: _a, ...p }) => p),
      has_more: hasMore,
      next_cursor: hasMore ? String(page.at(-1)!.cursor) : null,
    },
  };
}

function pageError(res: ServerResponse, status: number, code: string, message: string): void {
  sendHtml(res, status, errorPage('Payment account', code, message));
}

function liveLink(core: SandboxCore, id: string | undefined): ConnectLink | undefined {
  const link = id === undefined ? undefined : links.get(id);
  return link && link.expires_at > core.now() ? link : undefined;
}

/** `GET /payouts/connect/{id}`: the simulated processor's page; Approve links a test account. */
export function showConnect(
  core: SandboxCore,
  _req: IncomingMessage,
  res: ServerResponse,
  _url: URL,
  params: Record<string, string>,
): void {
  const link = liveLink(core, params.link_id);
  const app = link && core.ledger.app(link.app_id);
  if (!link || !app)
    return pageError(
      res,
      404,
      'link_expired',
      'This link was used or has expired; ask for a new one: mkt apps payments link',
    );
  sendHtml(
    res,
    200,
    layout(
      'Connect a payment account',
      `<h1>Connect a payment account</h1>
<p>The sandbox plays the payment processor. Approve to link a test account to <strong>${escapeHtml(app.name)}</strong> (<code>${escapeHtml(app.id)}</code>), so that it can sell paid plans.</p>
<form method="post" action="/payouts/connect/${escapeHtml(params.link_id!)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(link.csrf)}">
<button name="decision" value="approve">Approve</button>
<button name="decision" value="deny">Deny</button>
</form>`,
    ),
  );
}

/** `POST /payouts/connect/{id}`: the decision; the link is spent either way. */
export async function submitConnect(
  core: SandboxCore,
  req: IncomingMessage,
  res: ServerResponse,
  _url: URL,
  params: Record<string, string>,
): Promise<void> {
  const raw = await readRawBody(req);
  const own = [`http://127.0.0.1:${core.port}`, `http://localhost:${core.port}`, `http://[::1]:${core.port}`];
  const origin = req.headers.origin;
  if ((origin !== undefined && !own.includes(origin)) || req.headers['sec-fetch-site'] === 'cross-site') {
    return pageError(res, 403, 'access_denied', 'The form was sent from another site; nothing was linked.');
  }
  if (mediaType(req) !== 'application/x-www-form-urlencoded') {
    return pageError(res, 400, 'invalid_request', 'Send the form as application/x-www-form-urlencoded.');
  }
  const form = new URLSearchParams(raw.toString('utf8'));
  const link = liveLink(core, params.link_id);
  if (!link || !secretsEqual(form.get('csrf_token') ?? '', link.csrf)) {
    return pageError(
      res,
      403,
      'link_expired',
      'This link was used, has expired or the form is not its own; ask for a new one: mkt apps payments link',
    );
  }
  links.delete(params.link_id!);
  const app = core.ledger.app(link.app_id);
  if (!app) return pageError(res, 404, 'not_found', 'The app no longer exists.');
  if (form.get('decision') !== 'approve') {
    return sendHtml(
      res,
      200,
      layout('Not linked', `<h1>Not linked</h1><p>Nothing changed for ${escapeHtml(app.name)}.</p>`),
    );
  }
  core.life.store.linkPayouts(app.id, randomId('acct', 8), new Date(core.life.clock.now()).toISOString());
  await core.ledger.sync();
  const account = core.life.store.payouts(app.id)!.account_id;
  sendHtml(
    res,
    200,
    layout(
      'Linked',
      `<h1>Linked</h1><p><strong>${escapeHtml(app.name)}</strong> now sells paid plans; payouts go to <code id="account">${escapeHtml(account)}</code>. You can close this page.</p>`,
    ),
  );
}
