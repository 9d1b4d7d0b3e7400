import { Hono } from 'hono';
import { z } from 'zod';
import { routeApp } from '../http/auth.js';
import type { SandboxEnv } from '../http/env.js';
import { invalidRequest } from '../http/problem.js';
import { emptyBody, noQuery, query } from '../http/schemas.js';

/** Money (docs/DECISIONS.md §5): the app's payment account, the processor's connect link, the charges. */
export const moneyApi = new Hono<SandboxEnv>()
  .get('/apps/:app_id/payouts', noQuery, (c) => {
    const app = routeApp(c);
    const p = c.get('core').life.store.payouts(app.id);
    return c.json(
      {
        app_id: app.id,
        linked: p !== undefined,
        account_id: p?.account_id ?? null,
        linked_at: p?.linked_at ?? null,
      },
      200,
    );
  })
  // The URL of the simulated processor's connect page (single use, 10 minutes).
  .post('/apps/:app_id/payouts/link', noQuery, emptyBody, (c) => {
    const app = routeApp(c);
    const link = c.get('core').life.startConnect(app.id);
    return c.json(
      { url: `${c.get('core').siteUrl}/payouts/connect/${link.id}`, expires_at: link.expires_at },
      201,
    );
  })
  // Every charge, oldest first; the cursor is the last charge's position.
  .get(
    '/apps/:app_id/payments',
    query(
      z.strictObject({
        user_id: z.string().optional(),
        limit: z.string().optional(),
        cursor: z.string().optional(),
      }),
    ),
    (c) => {
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
      const rows = c.get('core').life.store.payments(app.id, {
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
    },
  );
