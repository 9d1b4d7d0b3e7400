import { OpenAPIHono, type RouteConfig } from '@hono/zod-openapi';
import { z } from 'zod';
import { EVENT_NAMES, HEADER } from '../../wire.js';
import type { Hono } from 'hono';
import type { SandboxEnv } from '../kernel/http/env.js';
import type { Mounted } from '../kernel/http/declare.js';
import { ApiError } from '../kernel/http/responses.js';
import { ENVELOPES } from '../kernel/shapes.js';

// The sandbox's API as an OpenAPI 3.1 document, made by @hono/zod-openapi from the declaration each
// route is mounted with (src/sandbox/kernel/http/declare.ts), read back from the router itself, so that
// every route it has is described and nothing else. Made when first asked (GET
// /api/v1/openapi.json) and at build time (schema/openapi.json).

type Json = Record<string, unknown>;

/** Every route's declaration, at the path the router serves it (rooms are mounted under /api/v1). */
export function declarations(app: Hono<SandboxEnv>): RouteConfig[] {
  const out = new Map<string, RouteConfig>();
  const undeclared = new Set<string>();
  for (const r of app.routes) {
    if (r.method === 'ALL') continue;
    const key = `${r.method} ${r.path}`;
    const declaration = (r.handler as Mounted).declaration;
    if (declaration) {
      const path = r.path.replace(/:(\w+)/g, '{$1}');
      out.set(key, {
        ...declaration,
        path,
        // The name generated clients call it by, the same since the first document (getApiV1Whoami).
        operationId: `${r.method.toLowerCase()}${r.path.replace(/[^A-Za-z0-9]+(\w)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
        tags: declaration.tags ?? [tagOf(path)],
        // The Host rule answers before any route (docs/DECISIONS.md §2, local servers).
        // An internal error can follow any request (a bug, or a fault such as a damaged file); it
        // changes nothing, and the fuzz run fails on any (test/openapi/fuzz.test.ts).
        responses: { ...declaration.responses, 421: MISDIRECTED, 500: INTERNAL },
      });
    } else undeclared.add(key);
  }
  for (const key of undeclared) {
    if (!out.has(key))
      throw new Error(
        `The route ${key} is mounted without a declaration (src/sandbox/kernel/http/declare.ts).`,
      );
  }
  return [...out.values()];
}

/** The Host rule's refusal, before any route (docs/DECISIONS.md §2, local servers). */
const MISDIRECTED = {
  description: 'The Host is not this loopback server',
  content: { 'application/json': { schema: ApiError } },
};

/** An internal error: `{"error": {"code": "internal_error", …}}`, nothing changed (docs/PROTOCOL.md, Errors). */
const INTERNAL = {
  description:
    'An internal error of the sandbox (a bug, or a fault of its disk or files); nothing was changed',
  content: { 'application/json': { schema: ApiError } },
};

/** The groups of operations, by the service they belong to. */
const TAGS: Array<[RegExp, string, string]> = [
  [/^\/api\/v1\/(whoami|entitlements)$/, 'identity', 'Who is calling, and what they are entitled to'],
  [/oauth|^\/\.well-known/, 'oauth', 'Authorization, tokens and the device flow'],
  [/^\/api\/v1\/apps\/\{app_id\}\/plans/, 'plans', "An app's pricing plans"],
  [/^\/api\/v1\/apps\/\{app_id\}\/keys/, 'keys', "An app's API keys"],
  [/^\/api\/v1\/apps\/\{app_id\}\/(payouts|payments)/, 'money', 'Payment accounts and charges'],
  [
    /^\/api\/v1\/apps\/\{app_id\}\/(deliveries|logs|webhooks)/,
    'records',
    'Deliveries, the relay and the request log',
  ],
  [/^\/api\/v1\/(apps\/\{app_id\}\/preview-links|console)/, 'console', 'Console and preview links'],
  [/^\/api\/v1\/apps/, 'apps', 'Apps and their secrets'],
  [/^\/api\/v1\/simulator/, 'simulator', 'Test users, events, the business clock and access checks'],
  [/^\/api\/v1\/openapi\.json$/, 'document', 'This document'],
  [/^\//, 'pages', 'Pages of the sandbox: home, dashboard, avatars, connect'],
];
const tagOf = (path: string): string => TAGS.find(([re]) => re.test(path))![1];

const webhook = (event: (typeof EVENT_NAMES)[number]) => ({
  post: {
    operationId: `webhook${event.replace(/(^|\.)(\w)/g, (_, _d: string, c: string) => c.toUpperCase())}`,
    summary: `The ${event} delivery to the app's webhook URL`,
    description:
      "Signed with the app's webhook secret (X-Marketplace-Signature), not authenticated otherwise.",
    security: [],
    parameters: [HEADER.signature, HEADER.delivery, HEADER.event].map((name) => ({
      name,
      in: 'header',
      required: true,
      schema: { type: 'string' },
    })),
    requestBody: {
      required: true,
      content: { 'application/json': { schema: schemaOf(ENVELOPES[event]) } },
    },
    responses: { '2XX': { description: 'Received (any other answer is retried)' } },
  },
});

function schemaOf(schema: z.ZodType): Json {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: 'output' }) as Json;
  return rest;
}

/** The document of `app` (src/sandbox/app.ts); `siteUrl` is its server (the sandbox that serves it). */
export function openApiDocument(app: Hono<SandboxEnv>, siteUrl = 'http://127.0.0.1:7878'): Json {
  const registry = new OpenAPIHono();
  registry.openAPIRegistry.registerComponent('securitySchemes', 'apiKey', {
    type: 'apiKey',
    in: 'header',
    name: HEADER.apiKey,
    description: 'An API key of the app (test_… or live_…)',
  });
  registry.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'An access token (at_…)',
  });
  registry.openAPIRegistry.registerComponent('securitySchemes', 'clientBasic', {
    type: 'http',
    scheme: 'basic',
    description: 'OAuth client authentication: client id and secret, form-encoded (RFC 6749 §2.3.1)',
  });
  for (const route of declarations(app)) registry.openAPIRegistry.registerPath(route);
  const doc = registry.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: 'mkt sandbox marketplace API',
      version: '1',
      license: { name: 'MIT', url: 'https://spdx.org/licenses/MIT.html' },
      description:
        'The local marketplace of `mkt sandbox start`, generated from the declaration of each of its routes. ' +
        'Unknown and repeated query parameters are refused (400) on every /api/v1 operation; errors are ' +
        '`{"error": {"code", "message"}}` (docs/PROTOCOL.md, Errors), at the OAuth endpoints RFC 6749 §5.2.',
    },
    servers: [{ url: siteUrl }],
    tags: TAGS.map(([, name, description]) => ({ name, description })),
  }) as unknown as Json;
  return { ...doc, webhooks: Object.fromEntries(EVENT_NAMES.map((event) => [event, webhook(event)])) };
}
