import { Hono } from 'hono';
import { z } from 'zod';
import { exportRunning } from '../fixtures/export.js';
import { fixturesSchema } from '../fixtures/schema.js';
import { createRoute, openapi } from '../http/declare.js';
import type { SandboxEnv } from '../http/env.js';
import { SandboxApiError } from '../http/problem.js';
import { API_SECURITY, apiJson, writeErrors } from '../http/responses.js';
import { NO_QUERY } from '../http/schemas.js';

const exportState = createRoute({
  method: 'post',
  path: '/sandbox/export',
  summary:
    "The running sandbox's state as a fixtures file (a consistent snapshot; the seeded developer only)",
  security: API_SECURITY,
  request: {
    query: NO_QUERY,
    body: { required: false, content: { 'application/json': { schema: z.strictObject({}) } } },
  },
  responses: {
    200: apiJson(
      "The running sandbox's state as a fixtures file",
      fixturesSchema.meta({ id: 'Fixtures', description: 'schema/sandbox-fixtures.schema.json' }),
    ),
    ...writeErrors(403),
  },
});

/**
 * `POST /sandbox/export`: the running sandbox's state as a fixtures file (`mkt sandbox export` on a
 * running sandbox), from a consistent snapshot of its database. It holds every app's secrets: only
 * for the seeded developer (a token) or the seeded app's test key, which `running.json` (0600) names.
 */
export const snapshotApi = new Hono<SandboxEnv>();

openapi(snapshotApi, exportState, async (c) => {
  const core = c.get('core');
  const p = c.get('principal');
  const seed = core.ledger.seed;
  const allowed =
    p.kind === 'key'
      ? p.key.mode === 'test' && p.app.id === seed.app_id
      : p.user.id === seed.developer_id && p.scopes.includes('apps:write');
  if (!allowed) {
    throw new SandboxApiError(
      403,
      'forbidden',
      "Only the seeded app's test key or the developer's apps:write token may export the sandbox's state.",
    );
  }
  return c.json(await exportRunning(core.ledger), 200, { 'cache-control': 'no-store' });
});
