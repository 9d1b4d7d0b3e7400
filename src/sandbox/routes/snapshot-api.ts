import { Hono } from 'hono';
import { exportRunning } from '../fixtures/export.js';
import type { SandboxEnv } from '../http/env.js';
import { SandboxApiError } from '../http/problem.js';
import { emptyBody, noQuery } from '../http/schemas.js';

/**
 * `POST /sandbox/export`: the running sandbox's state as a fixtures file (`mkt sandbox export` on a
 * running sandbox), from a consistent snapshot of its database. It holds every app's secrets: only
 * for the seeded developer (a token) or the seeded app's test key, which `running.json` (0600) names.
 */
export const snapshotApi = new Hono<SandboxEnv>().post('/sandbox/export', noQuery, emptyBody, async (c) => {
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
