import { Hono } from 'hono';
import type { SandboxEnv } from '../http/env.js';

let made: string | undefined;

/** `GET /api/v1/openapi.json`, open to all: the document is made on the first request (not at start). */
export const openApiRoutes = new Hono<SandboxEnv>().get('/api/v1/openapi.json', async (c) => {
  const site = c.get('core').siteUrl;
  if (made === undefined) {
    const { openApiDocument } = await import('./document.js');
    made = JSON.stringify(openApiDocument('{{site}}'));
  }
  return c.body(made.replaceAll('{{site}}', site), 200, { 'content-type': 'application/json' });
});
