import { Hono } from 'hono';
import { z } from 'zod';
import { routeApp } from '../http/auth.js';
import type { SandboxEnv } from '../http/env.js';
import { paginate } from '../http/paging.js';
import { SandboxApiError } from '../http/problem.js';
import { jsonBody, listQuery, noQuery } from '../http/schemas.js';
import { isoStamp, newApiKey, randomId } from '../ids.js';
import { keyView } from '../model.js';
import type { KeyRecord } from '../storage/records.js';

/** An app's API keys. */
export const keysApi = new Hono<SandboxEnv>()
  .get('/apps/:app_id/keys', listQuery, (c) => {
    const app = routeApp(c);
    const { ledger } = c.get('core');
    const view = (id: string) => {
      const key = ledger.key(id);
      return key && keyView(key);
    };
    return c.json(paginate(c.get('query'), ledger.keyIds(app.id), view), 200);
  })
  // The answer carries the secret once.
  .post('/apps/:app_id/keys', noQuery, jsonBody(z.strictObject({ mode: z.enum(['test', 'live']) })), (c) => {
    const app = routeApp(c);
    const mode = c.get('body').mode;
    const key: KeyRecord = {
      id: randomId('key', 8),
      app_id: app.id,
      mode,
      key: newApiKey(mode),
      created_at: isoStamp(c.get('core').now()),
    };
    c.get('core').ledger.commit({ op: 'key', v: key });
    return c.json({ ...keyView(key), key: key.key }, 201);
  })
  // The key stops working at once and its relay streams close.
  .delete('/apps/:app_id/keys/:key_id', noQuery, (c) => {
    const app = routeApp(c);
    const key = c.get('core').ledger.key(c.req.param('key_id'));
    if (!key || key.app_id !== app.id) {
      throw new SandboxApiError(404, 'not_found', `No key "${c.req.param('key_id')}".`);
    }
    // Its streams end with it (the stream registry hears the removal: src/sandbox/streams.ts).
    c.get('core').ledger.commit({ op: 'key-', id: key.id });
    return c.body(null, 204);
  });
