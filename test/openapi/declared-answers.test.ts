import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRoute, openapi, type Mounted } from '../../src/sandbox/kernel/http/declare.js';
import type { SandboxEnv } from '../../src/sandbox/kernel/http/env.js';
import { apiErrors, apiJson, apiNoContent } from '../../src/sandbox/kernel/http/responses.js';

// A route's declaration types its handler's answers: each `@ts-expect-error` below is an answer the
// declaration does not allow, so `npm run typecheck` fails the day the type checker lets one through
// (an unused @ts-expect-error is an error). The test itself checks the declaration rides on the router.

const route = createRoute({
  method: 'get',
  path: '/things/{id}',
  responses: {
    200: apiJson('A thing', z.strictObject({ n: z.number() })),
    204: apiNoContent('Nothing'),
    ...apiErrors(404),
  },
});

function mountAll(app: Hono<SandboxEnv>) {
  openapi(app, route, (c) => c.json({ n: 1 }, 200));
  openapi(app, route, (c) => c.body(null, 204));
  // @ts-expect-error: a body of the wrong shape
  openapi(app, route, (c) => c.json({ n: 'one' }, 200));
  // @ts-expect-error: a status the declaration does not list
  openapi(app, route, (c) => c.json({ n: 1 }, 201));
  // @ts-expect-error: a body on a status declared without one
  openapi(app, route, (c) => c.json({ n: 1 }, 204));
  // @ts-expect-error: a field missing
  openapi(app, route, (c) => c.json({}, 200));
}

describe('a route declaration', () => {
  it('is mounted with its handler and read back from the router', () => {
    const app = new Hono<SandboxEnv>();
    mountAll(app);
    const declared = app.routes.map((r) => (r.handler as Mounted).declaration).filter(Boolean);
    expect(declared).toHaveLength(6);
    expect(app.routes.every((r) => r.path === '/things/:id' && r.method === 'GET')).toBe(true);
  });
});
