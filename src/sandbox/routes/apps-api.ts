import { Hono } from 'hono';
import { z } from 'zod';
import { developerId, routeApp } from '../http/auth.js';
import type { SandboxEnv } from '../http/env.js';
import { paginate } from '../http/paging.js';
import { invalidRequest } from '../http/problem.js';
import { emptyBody, httpUrl, jsonBody, listQuery, noQuery, text } from '../http/schemas.js';
import { isoStamp, newClientSecret, newWebhookSecret, randomId } from '../ids.js';
import { appView } from '../model.js';
import type { AppRecord } from '../storage/records.js';

const appFields = {
  name: text(100),
  redirect_uris: z.array(httpUrl({ httpsOrLoopbackOnly: true })).max(20),
  webhook_url: httpUrl().nullable(),
  // The dashboard frames it with a token in its query: https, or a page on this machine.
  embed_url: httpUrl({ httpsOrLoopbackOnly: true }).nullable(),
};

/** Apps, their client secret and their webhook signing secret. */
export const appsApi = new Hono<SandboxEnv>()
  // With a key, its one app; with a developer token, every app the developer owns.
  .get('/apps', listQuery, (c) => {
    const p = c.get('principal');
    const { ledger } = c.get('core');
    const ids = p.kind === 'key' ? [p.app.id] : ledger.appIds(developerId(p));
    const view = (id: string) => {
      const app = ledger.app(id);
      return app && appView(app);
    };
    return c.json(paginate(c.get('query'), ids, view), 200);
  })
  // Creates an app for the developer (a key is refused); the answer carries the client secret once.
  .post(
    '/apps',
    noQuery,
    jsonBody(
      z.strictObject({
        name: appFields.name,
        redirect_uris: appFields.redirect_uris.optional(),
        webhook_url: appFields.webhook_url.optional(),
        embed_url: appFields.embed_url.optional(),
      }),
    ),
    (c) => {
      const owner = developerId(c.get('principal'));
      const input = c.get('body');
      const app: AppRecord = {
        id: randomId('app', 8),
        owner_id: owner,
        name: input.name,
        client_id: randomId('cid', 12),
        client_secret: newClientSecret(),
        redirect_uris: input.redirect_uris ?? [],
        webhook_url: input.webhook_url ?? null,
        embed_url: input.embed_url ?? null,
        webhook_secret: newWebhookSecret(),
        created_at: isoStamp(c.get('core').now()),
      };
      c.get('core').ledger.commit({ op: 'app', v: app });
      return c.json({ ...appView(app), client_secret: app.client_secret }, 201);
    },
  )
  .get('/apps/:app_id', noQuery, (c) => c.json(appView(routeApp(c)), 200))
  // Name, redirect URIs, webhook and embed URLs.
  .patch(
    '/apps/:app_id',
    noQuery,
    jsonBody(
      z.strictObject({
        name: appFields.name.optional(),
        redirect_uris: appFields.redirect_uris.optional(),
        webhook_url: appFields.webhook_url.optional(),
        embed_url: appFields.embed_url.optional(),
      }),
    ),
    (c) => {
      const app = routeApp(c);
      const input = c.get('body');
      if (Object.keys(input).length === 0) throw invalidRequest('Send at least one field to change.');
      const next: AppRecord = { ...app };
      if (input.name !== undefined) next.name = input.name;
      if (input.redirect_uris !== undefined) next.redirect_uris = input.redirect_uris;
      if (input.webhook_url !== undefined) next.webhook_url = input.webhook_url;
      if (input.embed_url !== undefined) next.embed_url = input.embed_url;
      c.get('core').ledger.commit({ op: 'app', v: next });
      return c.json(appView(next), 200);
    },
  )
  // The app with its plans, keys, test users and tokens; its streams close.
  .delete('/apps/:app_id', noQuery, (c) => {
    const app = routeApp(c);
    c.get('core').ledger.commit({ op: 'app-', id: app.id });
    return c.body(null, 204);
  })
  // Rotates the client secret and shows it once; the app's streams close.
  .post('/apps/:app_id/client-secret', noQuery, emptyBody, (c) => {
    const app = routeApp(c);
    const next: AppRecord = { ...app, client_secret: newClientSecret() };
    c.get('core').ledger.commit({ op: 'app', v: next });
    c.get('core').streams.close((o) => o.appId === app.id);
    return c.json({ ...appView(next), client_secret: next.client_secret }, 200);
  })
  .get('/apps/:app_id/webhook-secret', noQuery, (c) =>
    c.json({ webhook_secret: routeApp(c).webhook_secret }, 200),
  )
  // Rotates the signing secret at once; the app's relay streams close, so that listeners reconnect
  // and read the new secret.
  .post('/apps/:app_id/webhook-secret', noQuery, emptyBody, (c) => {
    const app = routeApp(c);
    const next = { ...app, webhook_secret: newWebhookSecret() };
    c.get('core').ledger.commit({ op: 'app', v: next });
    c.get('core').streams.close((o) => o.kind === 'relay' && o.appId === app.id);
    return c.json({ webhook_secret: next.webhook_secret }, 200);
  });
