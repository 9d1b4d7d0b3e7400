// The main flows through a client that openapi-typescript (types) and openapi-fetch (calls) make from
// the document: no cast anywhere (test/openapi/generated-clients.test.ts type-checks and runs it).
import createClient from 'openapi-fetch';
import type { paths } from './schema.ts';
import type { Flow } from './flow.ts';

export async function main(flow: Flow) {
  const api = createClient<paths>({ baseUrl: flow.siteUrl, headers: { 'x-api-key': flow.key } });
  const developer = createClient<paths>({
    baseUrl: flow.siteUrl,
    headers: { authorization: `Bearer ${flow.token}` },
  });
  const me = await api.GET('/api/v1/whoami');
  const entitled = await api.GET('/api/v1/entitlements', { params: { query: { user_id: flow.userId } } });
  const apps = await api.GET('/api/v1/apps');
  const made = await developer.POST('/api/v1/apps', {
    body: { name: 'Fetch Flow', redirect_uris: ['http://127.0.0.1/callback'] },
  });
  const plan = await api.POST('/api/v1/apps/{app_id}/plans', {
    params: { path: { app_id: flow.appId } },
    body: { id: 'fetch-gold', name: 'Gold', kind: 'monthly', price: { amount: 1500, currency: 'USD' } },
  });
  const key = await api.POST('/api/v1/apps/{app_id}/keys', {
    params: { path: { app_id: flow.appId } },
    body: { mode: 'test' },
  });
  const sent = await api.POST('/api/v1/simulator/events', {
    body: { app_id: flow.appId, event: 'user.authorized' },
  });
  return {
    email: me.data?.email,
    plan: entitled.data?.plan,
    limit: entitled.data?.usage.limit,
    apps: apps.data?.data.length,
    made: made.data?.name,
    secret: made.data?.client_secret.startsWith('cs_'),
    trial_days: plan.data?.trial_days,
    key: key.data?.key.slice(0, 5),
    delivery: sent.data?.delivery_id.slice(0, 4),
    webhook: sent.data?.webhook.status,
    listeners: sent.data?.listeners,
  };
}
