import { Hono } from 'hono';
import { z } from 'zod';
import { routeApp } from '../kernel/http/auth.js';
import type { SandboxEnv } from '../kernel/http/env.js';
import { invalidRequest } from '../kernel/http/problem.js';
import { createRoute, openapi } from '../kernel/http/declare.js';
import { API_SECURITY, apiErrors, apiJson, writeErrors } from '../kernel/http/responses.js';
import { cursorParam, limitParam, NO_QUERY } from '../kernel/http/schemas.js';
import { Link, list, Payment, recordId, stamp } from '../kernel/shapes.js';
import { Life } from './life.js';

const appPath = z.strictObject({ app_id: recordId('app') });

const routes = {
  payouts: createRoute({
    method: 'get',
    path: '/apps/{app_id}/payouts',
    summary: "The app's payment account",
    security: API_SECURITY,
    request: { params: appPath, query: NO_QUERY },
    responses: {
      200: apiJson(
        'The payment account',
        z.strictObject({
          app_id: recordId('app'),
          linked: z.boolean(),
          account_id: z.string().nullable(),
          linked_at: stamp.nullable(),
        }),
      ),
      ...apiErrors(403, 404),
    },
  }),
  link: createRoute({
    method: 'post',
    path: '/apps/{app_id}/payouts/link',
    summary: "The URL of the simulated processor's connect page (single use, 10 minutes)",
    security: API_SECURITY,
    request: {
      params: appPath,
      query: NO_QUERY,
      body: { required: false, content: { 'application/json': { schema: z.strictObject({}) } } },
    },
    responses: { 201: apiJson('A connect link', Link), ...writeErrors(403, 404) },
  }),
  payments: createRoute({
    method: 'get',
    path: '/apps/{app_id}/payments',
    summary: 'Every charge, oldest first',
    security: API_SECURITY,
    request: {
      params: appPath,
      query: z.strictObject({
        user_id: z.string().optional(),
        limit: limitParam,
        cursor: cursorParam.meta({ pattern: '^\\d{1,15}$' }),
      }),
    },
    responses: { 200: apiJson('Charges', list(Payment)), ...apiErrors(403, 404) },
  }),
};

/** Money (docs/DECISIONS.md §5): the app's payment account, the processor's connect link, the charges. */
export const moneyApi = new Hono<SandboxEnv>();

openapi(moneyApi, routes.payouts, (c) => {
  const app = routeApp(c);
  const p = c.get('core').services.get(Life).store.payouts(app.id);
  return c.json(
    {
      app_id: app.id,
      linked: p !== undefined,
      account_id: p?.account_id ?? null,
      linked_at: p?.linked_at ?? null,
    },
    200,
  );
});

openapi(moneyApi, routes.link, (c) => {
  const app = routeApp(c);
  const link = c.get('core').services.get(Life).startConnect(app.id);
  return c.json(
    { url: `${c.get('core').siteUrl}/payouts/connect/${link.id}`, expires_at: link.expires_at },
    201,
  );
});

// The cursor is the last charge's position.
openapi(moneyApi, routes.payments, (c) => {
  const app = routeApp(c);
  const q = c.get('query');
  const limitText = q.limit ?? '20';
  if (!/^\d{1,3}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > 100) {
    throw invalidRequest('Query parameter "limit" must be an integer from 1 to 100.');
  }
  if (q.cursor !== undefined && !/^\d{1,15}$/.test(q.cursor)) {
    throw invalidRequest('Query parameter "cursor" is not a cursor this server issued.');
  }
  const limit = Number(limitText);
  const rows = c
    .get('core')
    .services.get(Life)
    .store.payments(app.id, {
      userId: q.user_id,
      after: Number(q.cursor ?? 0),
      limit: limit + 1,
    });
  const page = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return c.json(
    {
      data: page.map(({ cursor: _cursor, app_id: _app, ...p }) => p),
      has_more: hasMore,
      next_cursor: hasMore ? String(page.at(-1)!.cursor) : null,
    },
    200,
  );
});
