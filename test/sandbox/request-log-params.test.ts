import { describe, expect, it } from 'vitest';
import { useSandbox } from '../support/sandbox.js';
import { call } from './helpers.js';

// The request log keeps the route and, beside it, the path's parameters that are well-formed ids
// (docs/PROTOCOL.md, Request log): never text that fails the id shape, a query string or a body.

const ctx = useSandbox();

describe('the request log', () => {
  it('keeps well-formed path parameters beside the route, and nothing else of the request', async () => {
    const key = ctx.sandbox.seed.test_key;
    const app = ctx.sandbox.seed.app.id;
    const plan = ctx.sandbox.seed.plans.find((p) => p.kind !== 'free')!.id;
    const good = await call(ctx.sandbox, 'GET', `/api/v1/apps/${app}/plans/${plan}`, {
      key,
    });
    expect(good.status).toBe(200);
    const bad = await call(ctx.sandbox, 'GET', `/api/v1/apps/${app}/plans/has%20space%3Csk_path%3E`, { key });
    expect([400, 404]).toContain(bad.status);
    const log = await call(ctx.sandbox, 'GET', `/api/v1/apps/${app}/logs?limit=100`, { key });
    const byId = (id: string | null) => log.json.data.find((r: { id: string }) => r.id === id);
    expect(byId(good.headers.get('x-request-id'))).toMatchObject({
      path: '/api/v1/apps/:app_id/plans/:plan_id',
      params: { app_id: app, plan_id: plan },
    });
    expect(byId(bad.headers.get('x-request-id'))).toMatchObject({
      path: '/api/v1/apps/:app_id/plans/:plan_id',
      params: { app_id: app },
    });
    const text = JSON.stringify(log.json);
    expect(text).not.toContain('sk_path');
    expect(text).not.toContain('has space');
  });
});
