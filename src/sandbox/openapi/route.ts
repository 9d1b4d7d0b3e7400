import { Hono } from 'hono';
import { z } from 'zod';
import { createRoute, openapi, type DeclaredAnswer } from '../kernel/http/declare.js';
import type { SandboxEnv } from '../kernel/http/env.js';
import { errorAnswer, openJson, PUBLIC } from '../kernel/http/responses.js';

let made: string | undefined;

const OpenApiDocument = z
  .strictObject({
    openapi: z.literal('3.1.0'),
    info: z.record(z.string(), z.unknown()),
    servers: z.array(z.strictObject({ url: z.string() })),
    paths: z.record(z.string(), z.unknown()),
    webhooks: z.record(z.string(), z.unknown()),
    components: z.record(z.string(), z.unknown()),
    tags: z.array(z.strictObject({ name: z.string(), description: z.string() })),
  })
  .meta({ description: 'An OpenAPI 3.1 document' });

const document = createRoute({
  method: 'get',
  path: '/api/v1/openapi.json',
  summary: 'This document (made from the route declarations on the first request)',
  security: PUBLIC,
  responses: { 200: openJson('This document', OpenApiDocument), 400: errorAnswer(400) },
});

/**
 * `GET /api/v1/openapi.json`, open to all: the document of `app` (the application this route is
 * mounted in, src/sandbox/app.ts), made on the first request (not at start).
 */
export function openApiRoutes(app: Hono<SandboxEnv>): Hono<SandboxEnv> {
  const routes = new Hono<SandboxEnv>();
  openapi(routes, document, async (c) => {
    const site = c.get('core').siteUrl;
    if (made === undefined) {
      const { openApiDocument } = await import('./document.js');
      made = JSON.stringify(openApiDocument(app, '{{site}}'));
    }
    // The text of the document (made by document.ts, whose shape the declaration above states).
    return c.body(made.replaceAll('{{site}}', site), 200, {
      'content-type': 'application/json',
    }) as unknown as DeclaredAnswer<typeof document>;
  });
  return routes;
}
