// The main flows through the SDK @hey-api/openapi-ts makes from the document (its fetch client, types
// and functions): no cast anywhere (test/openapi/generated-clients.test.ts type-checks and runs it).
import { createClient, createConfig } from './hey/client/index.ts';
import {
  getApiV1Apps,
  getApiV1Entitlements,
  getApiV1Whoami,
  postApiV1Apps,
  postApiV1AppsAppIdKeys,
  postApiV1AppsAppIdPlans,
  postApiV1SimulatorEvents,
} from './hey/sdk.gen.ts';
import type { Flow } from './flow.ts';

export async function main(flow: Flow) {
  const client = createClient(createConfig({ baseUrl: flow.siteUrl, headers: { 'x-api-key': flow.key } }));
  const developer = createClient(
    createConfig({ baseUrl: flow.siteUrl, headers: { authorization: `Bearer ${flow.token}` } }),
  );
  const me = await getApiV1Whoami({ client });
  const entitled = await getApiV1Entitlements({ client, query: { user_id: flow.userId } });
  const apps = await getApiV1Apps({ client });
  const made = await postApiV1Apps({
    client: developer,
    body: { name: 'Hey Flow', redirect_uris: ['http://127.0.0.1/callback'] },
  });
  const plan = await postApiV1AppsAppIdPlans({
    client,
    path: { app_id: flow.appId },
    body: { id: 'hey-gold', name: 'Gold', kind: 'monthly', price: { amount: 1500, currency: 'USD' } },
  });
  const key = await postApiV1AppsAppIdKeys({ client, path: { app_id: flow.appId }, body: { mode: 'test' } });
  const sent = await postApiV1SimulatorEvents({
    client,
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
