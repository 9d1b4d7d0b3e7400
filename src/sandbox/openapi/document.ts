import { z } from 'zod';
import { EVENT_NAMES, HEADER } from '../../wire.js';
import type { SandboxCore } from '../core.js';
import { sandboxApp } from '../http/app.js';
import type { Described } from '../http/schemas.js';
import { ANSWERS, ENVELOPES, type Answer } from './answers.js';

// The sandbox's API as an OpenAPI 3.1 document, made from the router itself: every route it has,
// the request schemas its middleware checks (jsonBody, query), and the answers in answers.ts.
// Made when first asked (GET /api/v1/openapi.json) and at build time (schema/openapi.json).

type Json = Record<string, unknown>;

const schemaOf = (schema: z.ZodType, io: 'input' | 'output'): Json => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  return rest;
};

const ERROR = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' } },
    },
  },
  description: 'Every API failure (docs/PROTOCOL.md, Errors)',
};
const OAUTH_ERROR = {
  type: 'object',
  required: ['error'],
  properties: { error: { type: 'string' }, error_description: { type: 'string' } },
  description: 'A token-endpoint failure (RFC 6749 §5.2)',
};

const TOKEN_FORM = {
  type: 'object',
  properties: Object.fromEntries(
    [
      'grant_type',
      'code',
      'redirect_uri',
      'code_verifier',
      'refresh_token',
      'client_id',
      'client_secret',
      'scope',
    ].map((f) => [f, { type: 'string' }]),
  ),
  required: ['grant_type'],
};

/** The routes of the router (method, path as Hono names it, the schemas their middleware checks). */
export function routesOf(): Array<{ method: string; path: string; body?: z.ZodType; query?: z.ZodType }> {
  const app = sandboxApp({} as SandboxCore);
  const routes = new Map<string, { method: string; path: string; body?: z.ZodType; query?: z.ZodType }>();
  for (const r of app.routes) {
    if (r.method === 'ALL') continue;
    const key = `${r.method} ${r.path}`;
    const route = routes.get(key) ?? { method: r.method, path: r.path };
    const described = (r.handler as Described).openapi;
    if (described) route[described.in] = described.schema;
    routes.set(key, route);
  }
  return [...routes.values()];
}

function operation(route: ReturnType<typeof routesOf>[number], answers: Answer[]): Json {
  const api = route.path.startsWith('/api/v1/') && !route.path.endsWith('/oauth/token');
  const token = route.path.endsWith('/oauth/token');
  const params: Json[] = [...route.path.matchAll(/:(\w+)/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  if (route.query) {
    const q = schemaOf(route.query, 'input') as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, schema] of Object.entries(q.properties ?? {}))
      params.push({ name, in: 'query', required: (q.required ?? []).includes(name), schema });
  }
  const responses: Json = {};
  for (const a of answers) {
    const media = a.media ?? 'application/json';
    responses[String(a.status)] = {
      description: a.summary,
      ...(a.body
        ? { content: { [media]: { schema: schemaOf(a.body, 'output') } } }
        : a.media
          ? { content: { [media]: {} } }
          : {}),
    };
  }
  responses.default = token
    ? {
        description: 'Refused',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/OAuthError' } } },
      }
    : api
      ? {
          description: 'Failed',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        }
      : { description: 'Failed: an error page', content: { 'text/html': {} } };
  const op: Json = {
    operationId: `${route.method.toLowerCase()}${route.path.replace(/[^A-Za-z0-9]+(\w)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
    summary: answers[0]!.summary,
    parameters: params,
    responses,
  };
  if (route.body) {
    op.requestBody = {
      required: false,
      content: { 'application/json': { schema: schemaOf(route.body, 'input') } },
    };
  } else if (token) {
    op.requestBody = {
      required: true,
      content: { 'application/x-www-form-urlencoded': { schema: TOKEN_FORM } },
    };
  } else if (route.method === 'POST' && !api) {
    op.requestBody = {
      required: true,
      content: { 'application/x-www-form-urlencoded': { schema: { type: 'object' } } },
    };
  }
  if (api && route.path !== '/api/v1/openapi.json') op.security = [{ apiKey: [] }, { bearer: [] }];
  return op;
}

/** The document; `siteUrl` is its server (the sandbox that serves it). */
export function openApiDocument(siteUrl = 'http://127.0.0.1:7878'): Json {
  const paths: Record<string, Json> = {};
  for (const route of routesOf()) {
    const answers = ANSWERS[`${route.method} ${route.path}`];
    if (!answers)
      throw new Error(`src/sandbox/openapi/answers.ts does not describe ${route.method} ${route.path}.`);
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(route, answers) };
  }
  const webhooks = Object.fromEntries(
    EVENT_NAMES.map((event) => [
      event,
      {
        post: {
          operationId: `webhook${event.replace(/(^|\.)(\w)/g, (_, _d: string, c: string) => c.toUpperCase())}`,
          summary: `The ${event} delivery to the app's webhook URL`,
          parameters: [HEADER.signature, HEADER.delivery, HEADER.event].map((name) => ({
            name,
            in: 'header',
            required: true,
            schema: { type: 'string' },
          })),
          requestBody: {
            required: true,
            content: { 'application/json': { schema: schemaOf(ENVELOPES[event], 'output') } },
          },
          responses: { '2XX': { description: 'Received (any other answer is retried)' } },
        },
      },
    ]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'mkt sandbox marketplace API',
      version: '1',
      description:
        'The local marketplace of `mkt sandbox start`, generated from the schemas its routes check.',
    },
    servers: [{ url: siteUrl }],
    paths,
    webhooks,
    components: {
      schemas: { Error: ERROR, OAuthError: OAUTH_ERROR },
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: HEADER.apiKey },
        bearer: { type: 'http', scheme: 'bearer' },
      },
    },
  };
}
