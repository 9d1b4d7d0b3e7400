import { Validator } from '@seriousme/openapi-schema-validator';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { OpenAPIBackend } from 'openapi-backend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxCore } from '../../src/sandbox/kernel/core.js';
import { sandboxApp } from '../../src/sandbox/app.js';
import { sandboxDocument } from '../../src/sandbox/app.js';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { startTestSandbox } from '../support/sandbox.js';

// The OpenAPI document is checked by tools nobody here wrote: @seriousme/openapi-schema-validator
// (is it a valid OpenAPI 3.1 document?) and openapi-backend (does each request and answer of the
// main flows match what it says?). Any request or answer it does not describe fails the test.

let sb: Sandbox;
let doc: Record<string, unknown>;
let api: InstanceType<typeof OpenAPIBackend>;
const misfits: string[] = [];
const seen = new Set<string>();

beforeAll(async () => {
  sb = await startTestSandbox();
  const res = await fetch(`${sb.siteUrl}/api/v1/openapi.json`);
  expect(res.status).toBe(200);
  doc = (await res.json()) as Record<string, unknown>;
  api = new OpenAPIBackend({ definition: structuredClone(doc) as never, quick: true, validate: true });
  await api.init();
});
afterAll(() => sb?.close());

interface Sent {
  status: number;
  json: unknown;
}

/** One request through the sandbox, its request and answer checked against the document. */
async function call(
  method: string,
  path: string,
  options: { key?: string; token?: string; body?: unknown; form?: Record<string, string> } = {},
): Promise<Sent> {
  const headers: Record<string, string> = {};
  if (options.key) headers['x-api-key'] = options.key;
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  } else if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const url = new URL(path, sb.siteUrl);
  const request = {
    method,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers,
    body: options.form ?? options.body,
  };
  const operation = api.matchOperation(request);
  if (!operation) misfits.push(`${method} ${path}: no operation in the document`);
  else {
    seen.add(operation.operationId!);
    const checked = api.validateRequest(request, operation);
    if (!checked.valid && !(options as { invalid?: boolean }).invalid)
      misfits.push(`${method} ${path} request: ${JSON.stringify(checked.errors)}`);
  }
  const res = await fetch(url, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  const json = type.includes('json') && text !== '' ? (JSON.parse(text) as unknown) : undefined;
  if (operation) {
    const responses = operation.responses as Record<string, { content?: Record<string, unknown> }>;
    const described = responses[String(res.status)] ?? responses.default;
    if (!described) misfits.push(`${method} ${path}: status ${res.status} not described`);
    else {
      const media = Object.keys(described.content ?? {});
      if (media.length === 0 && text !== '')
        misfits.push(`${method} ${path}: ${res.status} has a body the document does not describe`);
      if (media.length > 0 && !media.some((m) => type.startsWith(m)))
        misfits.push(`${method} ${path}: ${res.status} is ${type}, the document says ${media.join(', ')}`);
      if (json !== undefined) {
        const checked = api.validateResponse(json, operation, res.status);
        if (checked.errors)
          misfits.push(`${method} ${path} ${res.status} answer: ${JSON.stringify(checked.errors)}`);
      }
    }
  }
  return { status: res.status, json };
}

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document, the same as the one made without a sandbox', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(doc).toEqual(sandboxDocument(sb.siteUrl));
    // The copy the package ships (npm run build: scripts/generate-schemas.js) is the same document.
    const shipped = JSON.parse(await readFile(new URL('../../schema/openapi.json', import.meta.url), 'utf8'));
    expect(shipped).toEqual(sandboxDocument());
  });

  it('describes every route of the router, and every webhook event', () => {
    // The router itself, as the sandbox serves it (the console's pages are its own application, at /console/*).
    const paths = doc.paths as Record<string, Record<string, unknown>>;
    const routes = sandboxApp({} as SandboxCore).routes.filter((r) => r.method !== 'ALL');
    expect(new Set(routes.map((r) => `${r.method} ${r.path}`)).size).toBeGreaterThan(40);
    for (const r of routes) {
      const path = r.path.replace(/:(\w+)/g, '{$1}');
      expect(paths[path]?.[r.method.toLowerCase()], `${r.method} ${r.path}`).toBeDefined();
    }
    const operations = Object.values(paths).flatMap((p) => Object.keys(p));
    expect(operations).toHaveLength(new Set(routes.map((r) => `${r.method} ${r.path}`)).size);
    expect(Object.keys(doc.webhooks as object).sort()).toEqual([
      'subscription.cancelled',
      'subscription.created',
      'user.authorized',
      'user.revoked',
    ]);
  });

  it('describes every request and answer of the main flows (keys, apps, plans, simulator, money, records, errors)', async () => {
    const key = sb.seed.test_key;
    const appId = sb.seed.app.id;
    const [ada] = sb.seed.users;
    expect((await call('GET', '/api/v1/whoami', { key })).status).toBe(200);
    expect((await call('GET', `/api/v1/entitlements?user_id=${ada!.id}`, { key })).status).toBe(200);
    expect((await call('GET', '/.well-known/oauth-authorization-server')).status).toBe(200);
    // Apps
    expect((await call('GET', '/api/v1/apps', { key })).status).toBe(200);
    expect((await call('GET', `/api/v1/apps/${appId}`, { key })).status).toBe(200);
    expect(
      (
        await call('PATCH', `/api/v1/apps/${appId}`, {
          key,
          body: { webhook_url: 'http://127.0.0.1:9/hooks' },
        })
      ).status,
    ).toBe(200);
    expect((await call('GET', `/api/v1/apps/${appId}/webhook-secret`, { key })).status).toBe(200);
    // Plans
    const plan = {
      id: 'team',
      name: 'Team',
      kind: 'annual',
      price: { amount: 9900, currency: 'EUR' },
      features: ['export'],
      trial_days: 7,
    };
    expect((await call('POST', `/api/v1/apps/${appId}/plans`, { key, body: plan })).status).toBe(201);
    expect((await call('GET', `/api/v1/apps/${appId}/plans?limit=2`, { key })).status).toBe(200);
    expect(
      (await call('PATCH', `/api/v1/apps/${appId}/plans/team`, { key, body: { name: 'Team+' } })).status,
    ).toBe(200);
    expect((await call('GET', `/api/v1/apps/${appId}/plans/team`, { key })).status).toBe(200);
    // Keys
    const made = await call('POST', `/api/v1/apps/${appId}/keys`, { key, body: { mode: 'test' } });
    expect(made.status).toBe(201);
    expect((await call('GET', `/api/v1/apps/${appId}/keys`, { key })).status).toBe(200);
    expect(
      (await call('DELETE', `/api/v1/apps/${appId}/keys/${(made.json as { id: string }).id}`, { key }))
        .status,
    ).toBe(204);
    // The simulator: test users over business time, events, the access rule
    const user = await call('POST', '/api/v1/simulator/users', {
      key,
      body: { app_id: appId, plan: 'team', payment_behaviour: 'declines_renewals' },
    });
    expect(user.status).toBe(201);
    const userId = (user.json as { id: string }).id;
    expect((await call('GET', `/api/v1/simulator/users?app_id=${appId}`, { key })).status).toBe(200);
    expect((await call('GET', `/api/v1/simulator/users/${userId}?app_id=${appId}`, { key })).status).toBe(
      200,
    );
    expect(
      (
        await call('PATCH', `/api/v1/simulator/users/${userId}`, {
          key,
          body: { app_id: appId, plan: 'pro-monthly' },
        })
      ).status,
    ).toBe(200);
    expect((await call('GET', '/api/v1/simulator/clock', { key })).status).toBe(200);
    expect(
      (await call('POST', '/api/v1/simulator/clock', { key, body: { advance_s: 40 * 86_400 } })).status,
    ).toBe(200);
    expect(
      (
        await call('POST', '/api/v1/simulator/entitlement-checks', {
          key,
          body: { app_id: appId, user_id: userId, feature: 'export' },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await call('POST', '/api/v1/simulator/events', {
          key,
          body: { app_id: appId, event: 'subscription.created' },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await call('POST', '/api/v1/simulator/events', {
          key,
          body: {
            app_id: appId,
            event: 'user.revoked',
            data: { user_id: ada!.id, app_id: appId, scopes: ['identity:read'] },
            synthetic: true,
          },
        })
      ).status,
    ).toBe(201);
    expect(
      (await call('POST', `/api/v1/simulator/users/${ada!.id}/cancel`, { key, body: { app_id: appId } }))
        .status,
    ).toBe(200);
    const auth = await call('POST', '/api/v1/simulator/authorize', {
      key,
      body: { app_id: appId, user_id: ada!.id },
    });
    expect(auth.status).toBe(201);
    const tokens = auth.json as { access_token: string; refresh_token: string };
    expect((await call('GET', '/api/v1/whoami', { token: tokens.access_token })).status).toBe(200);
    expect((await call('GET', '/api/v1/entitlements', { token: tokens.access_token })).status).toBe(200);
    const refreshed = await call('POST', '/api/oauth/token', {
      form: {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: sb.seed.app.client_id,
        client_secret: sb.seed.app.client_secret,
      },
    });
    expect(refreshed.status).toBe(200);
    expect(
      (
        await call('POST', '/api/oauth/token', {
          form: {
            grant_type: 'refresh_token',
            refresh_token: 'rt_nope',
            client_id: sb.seed.app.client_id,
            client_secret: sb.seed.app.client_secret,
          },
        })
      ).status,
    ).toBe(400);
    expect(
      (await call('POST', `/api/v1/simulator/users/${ada!.id}/revoke`, { key, body: { app_id: appId } }))
        .status,
    ).toBe(200);
    // Money and records
    expect((await call('GET', `/api/v1/apps/${appId}/payouts`, { key })).status).toBe(200);
    expect((await call('POST', `/api/v1/apps/${appId}/payouts/link`, { key })).status).toBe(201);
    expect((await call('GET', `/api/v1/apps/${appId}/payments?limit=5`, { key })).status).toBe(200);
    const deliveries = await call('GET', `/api/v1/apps/${appId}/deliveries`, { key });
    expect(deliveries.status).toBe(200);
    const first = (deliveries.json as { data: Array<{ id: string }> }).data[0]!;
    expect((await call('GET', `/api/v1/apps/${appId}/deliveries/${first.id}`, { key })).status).toBe(200);
    expect((await call('GET', `/api/v1/apps/${appId}/logs?limit=5`, { key })).status).toBe(200);
    expect((await call('POST', '/api/v1/console/sessions', { key })).status).toBe(201);
    // Failures: every one in the error shape the document gives
    expect((await call('GET', '/api/v1/whoami')).status).toBe(401);
    expect((await call('GET', `/api/v1/apps/${appId}/plans/nope`, { key })).status).toBe(404);
    expect(
      (await call('POST', `/api/v1/apps/${appId}/plans`, { key, body: { ...plan, id: 'team' } })).status,
    ).toBe(409);
    expect(
      (
        await call('POST', '/api/v1/simulator/clock', {
          key,
          body: { advance_s: 'soon' },
          invalid: true,
        } as never)
      ).status,
    ).toBe(400);
    expect((await call('DELETE', `/api/v1/apps/${appId}/plans/pro-monthly`, { key })).status).toBe(200);
    expect((await call('DELETE', `/api/v1/apps/${appId}/plans/team`, { key })).status).toBe(204);
    expect(misfits).toEqual([]);
    // The sample covers most of the API's operations.
    expect(seen.size).toBeGreaterThanOrEqual(34);
  }, 90_000);

  it('describes the webhook envelope of every delivery the flows made', async () => {
    // Ajv (JSON Schema 2020-12, as OpenAPI 3.1 uses), the one openapi-backend brings.
    const Ajv2020 = createRequire(createRequire(import.meta.url).resolve('openapi-backend'))(
      'ajv/dist/2020',
    ).default;
    const ajv = new Ajv2020({ strict: false });
    const hooks = doc.webhooks as Record<
      string,
      { post: { requestBody: { content: Record<string, { schema: object }> } } }
    >;
    const listed = await fetch(`${sb.siteUrl}/api/v1/apps/${sb.seed.app.id}/deliveries?limit=100`, {
      headers: { 'x-api-key': sb.seed.test_key },
    });
    const { data } = (await listed.json()) as { data: Array<{ id: string; event: string }> };
    expect(new Set(data.map((d) => d.event)).size).toBeGreaterThanOrEqual(3);
    for (const d of data) {
      const res = await fetch(`${sb.siteUrl}/api/v1/apps/${sb.seed.app.id}/deliveries/${d.id}`, {
        headers: { 'x-api-key': sb.seed.test_key },
      });
      const envelope = JSON.parse(((await res.json()) as { body: string }).body) as unknown;
      const validate = ajv.compile(hooks[d.event]!.post.requestBody.content['application/json']!.schema);
      expect(validate(envelope) ? [] : validate.errors, `${d.event} ${d.id}`).toEqual([]);
    }
  });
});
