import type { SandboxCore } from '../core.js';
import { isoStamp, newApiKey, newClientSecret, newWebhookSecret, randomId } from '../ids.js';
import { addTestUser } from '../model.js';
import type { AppRecord, KeyRecord, PlanRecord } from './records.js';

/** Creates the developer, the "Sandbox App" with its plans and keys, and three test users. */
export function seedLedger(core: SandboxCore): void {
  const store = core.ledger;
  const created = isoStamp(core.now());
  const developerId = randomId('usr', 8);
  const developer = { id: developerId, email: 'dev@sandbox.test', name: 'Dev Eloper', app_id: null };
  store.commit({ op: 'user', v: { ...developer, created_at: created } });
  const app: AppRecord = {
    id: randomId('app', 8),
    owner_id: developerId,
    name: 'Sandbox App',
    client_id: randomId('cid', 12),
    client_secret: newClientSecret(),
    redirect_uris: ['http://127.0.0.1/callback'],
    webhook_url: null,
    embed_url: null,
    webhook_secret: newWebhookSecret(),
    created_at: created,
  };
  store.commit({ op: 'app', v: app });
  const free: PlanRecord = {
    id: 'free',
    app_id: app.id,
    name: 'Free',
    kind: 'free',
    price: null,
    features: ['basic'],
    api_call_limit: 100,
    archived: false,
    created_at: created,
  };
  const pro: PlanRecord = {
    id: 'pro-monthly',
    app_id: app.id,
    name: 'Pro (monthly)',
    kind: 'monthly',
    price: { amount: 999, currency: 'USD' },
    features: ['basic', 'export', 'api'],
    api_call_limit: 10_000,
    archived: false,
    created_at: created,
  };
  store.commit({ op: 'plan', v: free });
  store.commit({ op: 'plan', v: pro });
  const key = (mode: KeyRecord['mode']): KeyRecord => ({
    id: randomId('key', 8),
    app_id: app.id,
    mode,
    key: newApiKey(mode),
    created_at: created,
  });
  const testKey = key('test');
  const liveKey = key('live');
  store.commit({ op: 'key', v: testKey });
  store.commit({ op: 'key', v: liveKey });
  const users = [
    addTestUser(
      core,
      app,
      { plan: pro, status: 'active', email: 'ada@sandbox.test', name: 'Ada Active', api_calls: 42 },
      false,
    ),
    addTestUser(
      core,
      app,
      { plan: free, status: 'active', email: 'fred@sandbox.test', name: 'Fred Free', api_calls: 3 },
      false,
    ),
    addTestUser(
      core,
      app,
      { plan: pro, status: 'past_due', email: 'pat@sandbox.test', name: 'Pat Pastdue' },
      false,
    ),
  ];
  const seed = {
    developer_id: developerId,
    app_id: app.id,
    test_key_id: testKey.id,
    live_key_id: liveKey.id,
    user_ids: users.map((u) => u.user.id),
  };
  store.commit({ op: 'seed', v: seed });
}
