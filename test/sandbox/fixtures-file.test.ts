import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exportFolder } from '../../src/sandbox/fixtures/export.js';
import { parseFixtures } from '../../src/sandbox/fixtures/read.js';
import { useIdSeed } from '../../src/sandbox/kernel/ids.js';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { startTestSandbox } from '../support/sandbox.js';

// Fixtures files (`--seed`, `sandbox export`): every kind of record they declare, the same ids and
// answers from the same file, and refusals that name the line and the field.

const FILE = `{
  "clock": "2026-03-01T09:00:00Z",
  "developer": { "id": "usr_dev1", "email": "owner@example.test", "name": "Owner" },
  "apps": [
    {
      "name": "Invoices",
      "client_secret": "cs_fixed_client_secret_0001",
      "webhook_secret": "whsec_fixed_webhook_secret_01",
      "plans": [
        { "id": "free", "name": "Free", "kind": "free", "features": ["basic"], "api_call_limit": 100 },
        { "id": "monthly", "name": "Monthly", "kind": "monthly", "price": { "amount": 900, "currency": "USD" }, "features": ["basic", "export"], "trial_days": 14 },
        { "id": "annual", "name": "Annual", "kind": "annual", "price": { "amount": 9000, "currency": "EUR" }, "features": ["basic", "export"] },
        { "id": "lifetime", "name": "Lifetime", "kind": "one_time", "price": { "amount": 20000, "currency": "USD" }, "features": ["basic"] },
        { "id": "legacy", "name": "Legacy", "kind": "monthly", "price": { "amount": 500, "currency": "USD" }, "archived": true }
      ],
      "keys": [{ "id": "key_test1", "mode": "test", "key": "test_fixed_key_for_the_suite_01" }],
      "users": [
        { "id": "usr_trial", "name": "Tia Trial", "plan": "monthly" },
        { "id": "usr_annual", "plan": "annual", "trial_days": 0, "payment_behaviour": "declines_renewals", "api_calls": 12 },
        { "id": "usr_late", "plan": "monthly", "trial_days": 0, "status": "past_due" },
        { "plan": "lifetime" },
        { "id": "usr_old", "plan": "legacy" }
      ],
      "grants": [{ "user": "usr_trial", "scopes": ["identity:read", "entitlements:read"], "access_token": "at_fixed_access_token_0001" }]
    }
  ]
}
`;

let sandboxes: Sandbox[] = [];
const folders: string[] = [];
afterEach(async () => {
  for (const s of sandboxes) await s.close();
  sandboxes = [];
  useIdSeed(undefined);
  for (const f of folders.splice(0)) await rm(f, { recursive: true, force: true });
});

async function start(text: string, digest = 'digest-1', dataDir?: string): Promise<Sandbox> {
  const sb = await startTestSandbox({
    fixtures: { fixtures: parseFixtures(text, 'f.json'), digest },
    dataDir,
  });
  sandboxes.push(sb);
  return sb;
}

/** What a test suite would read of the seeded state. */
async function answers(sb: Sandbox, bearer = true): Promise<unknown> {
  const key = 'test_fixed_key_for_the_suite_01';
  const get = async (path: string, headers: Record<string, string> = { 'x-api-key': key }) => {
    const res = await fetch(`${sb.siteUrl}${path}`, { headers });
    return { status: res.status, body: (await res.json()) as unknown };
  };
  const app = sb.seed.app.id;
  const site = (v: unknown) => JSON.parse(JSON.stringify(v).replaceAll(sb.siteUrl, 'SITE')) as unknown;
  return site({
    seed: sb.seed,
    apps: await get('/api/v1/apps'),
    plans: await get(`/api/v1/apps/${app}/plans?limit=100`),
    keys: await get(`/api/v1/apps/${app}/keys`),
    users: await get(`/api/v1/simulator/users?app_id=${app}&limit=100`),
    payments: await get(`/api/v1/apps/${app}/payments?limit=100`),
    entitlement: await get(`/api/v1/entitlements?user_id=usr_annual`),
    whoami: bearer
      ? await get('/api/v1/whoami', { authorization: 'Bearer at_fixed_access_token_0001' })
      : null,
    webhook: await get(`/api/v1/apps/${app}/webhook-secret`),
  });
}

/** The answers with every time replaced: an export replays at the business time it was made. */
const undated = (v: unknown) =>
  JSON.parse(JSON.stringify(v).replace(/"\d{4}-\d\d-\d\dT[\d:.]+Z"/g, '"T"')) as unknown;

describe('a fixtures file', () => {
  it('seeds every plan kind, trials, statuses, payment behaviours, usage, grants and business time', async () => {
    const sb = await start(FILE);
    const a = (await answers(sb)) as Record<string, { status: number; body: Record<string, unknown> }>;
    expect(sb.seed.app.client_secret).toBe('cs_fixed_client_secret_0001');
    expect(a.webhook!.body).toEqual({ webhook_secret: 'whsec_fixed_webhook_secret_01' });
    const plans = a.plans!.body.data as Array<{ id: string; kind: string; archived: boolean }>;
    expect(plans.map((p) => [p.id, p.kind, p.archived])).toEqual([
      ['free', 'free', false],
      ['monthly', 'monthly', false],
      ['annual', 'annual', false],
      ['lifetime', 'one_time', false],
      ['legacy', 'monthly', true],
    ]);
    const users = a.users!.body.data as Array<Record<string, unknown>>;
    expect(
      users.map((u) => [
        u.id === undefined ? '' : String(u.id).slice(0, 4),
        u.plan,
        u.status,
        u.payment_behaviour,
      ]),
    ).toEqual([
      ['usr_', 'monthly', 'trialing', 'succeeds'],
      ['usr_', 'annual', 'active', 'declines_renewals'],
      ['usr_', 'monthly', 'past_due', 'succeeds'],
      ['usr_', 'lifetime', 'active', 'succeeds'],
      ['usr_', 'legacy', 'active', 'succeeds'],
    ]);
    expect(users[0]).toMatchObject({
      id: 'usr_trial',
      name: 'Tia Trial',
      expires_at: '2026-03-15T09:00:00.000Z',
    });
    expect(a.entitlement!.body).toMatchObject({
      plan: 'annual',
      usage: { api_calls: 12 },
      expires_at: '2027-03-01T09:00:00.000Z',
    });
    expect(a.whoami!.body).toMatchObject({ id: 'usr_trial', name: 'Tia Trial' });
    const clock = await fetch(`${sb.siteUrl}/api/v1/simulator/clock`, {
      headers: { 'x-api-key': 'test_fixed_key_for_the_suite_01' },
    });
    expect(((await clock.json()) as { now: string }).now.slice(0, 15)).toBe('2026-03-01T09:0');
  });

  it('gives the same ids and the same answers on two runs, and other ids from another file', async () => {
    // The live key is a secret the file leaves out: drawn with each folder's own salt (below).
    const first = (await answers(await start(FILE))) as { seed: { live_key: string; app: { id: string } } };
    const second = (await answers(await start(FILE))) as { seed: { live_key: string } };
    expect(second.seed.live_key).not.toBe(first.seed.live_key);
    const scrub = (x: { seed: { live_key: string } }) =>
      JSON.parse(
        JSON.stringify(x)
          .replaceAll(x.seed.live_key, 'LIVE')
          .replaceAll(`"${x.seed.live_key.slice(-4)}"`, '"LAST4"'),
      );
    expect(scrub(second)).toEqual(scrub(first));
    const other = await start(FILE.replace('"Invoices"', '"Invoices 2"'), 'digest-2');
    expect(other.seed.app.id).not.toBe((first as { seed: { app: { id: string } } }).seed.app.id);
  });

  it('draws the secrets it leaves out from the file and the folder, never from the file alone', async () => {
    const bare = JSON.stringify({
      apps: [
        {
          name: 'Bare',
          users: [{ id: 'usr_a', plan: 'free' }],
          plans: [{ id: 'free', name: 'Free', kind: 'free' }],
          grants: [{ user: 'usr_a', scopes: ['identity:read'] }],
        },
      ],
    });
    const secrets = (sb: Sandbox) => [
      sb.seed.app.client_secret,
      sb.seed.app.webhook_secret,
      sb.seed.test_key,
      sb.seed.live_key,
    ];
    const a = await start(bare);
    const b = await start(bare);
    // The same ids from the same file…
    expect(b.seed.app.id).toBe(a.seed.app.id);
    expect(b.seed.app.client_id).toBe(a.seed.app.client_id);
    // …but none of the secrets: each folder has its own salt.
    const [sa, sb2] = [secrets(a), secrets(b)];
    for (let i = 0; i < sa.length; i++) expect(sb2[i]).not.toBe(sa[i]);
    // A secret the file states is kept as it is.
    const fixed = await start(FILE);
    expect(fixed.seed.app.client_secret).toBe('cs_fixed_client_secret_0001');
    expect(fixed.seed.test_key).toBe('test_fixed_key_for_the_suite_01');
  });

  it('is written back by export, and the export replays to the same answers', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'mkt-fixtures-'));
    folders.push(folder);
    const sb = await start(FILE, 'digest-1', folder);
    // Without the bearer request, which would count as the user's API call.
    const before = await answers(sb, false);
    await sb.close();
    sandboxes = sandboxes.filter((s) => s !== sb);
    const exported = await exportFolder(folder);
    const replayed = await start(JSON.stringify(exported, null, 2), 'digest-export');
    const after = (await answers(replayed, false)) as Record<string, unknown>;
    const { payments: _p1, ...rest } = before as Record<string, unknown>;
    const { payments: _p2, ...restAfter } = after;
    // Charges are history, not state: everything else reads the same.
    expect(undated(restAfter)).toEqual(undated(rest));

    // The JSON Schema the package ships (npm run build) accepts both files and refuses a bad one,
    // read by Ajv (JSON Schema 2020-12).
    const schema = JSON.parse(
      await readFile(new URL('../../schema/sandbox-fixtures.schema.json', import.meta.url), 'utf8'),
    );
    const Ajv2020 = createRequire(createRequire(import.meta.url).resolve('openapi-backend'))(
      'ajv/dist/2020',
    ).default;
    const validate = new Ajv2020({ strict: false }).compile(schema);
    expect(validate(JSON.parse(FILE)) ? [] : validate.errors).toEqual([]);
    expect(validate(JSON.parse(JSON.stringify(exported))) ? [] : validate.errors).toEqual([]);
    expect(validate(JSON.parse(FILE.replace('"kind": "one_time"', '"kind": "weekly"')))).toBe(false);
  });

  it('is refused with the line and the field at fault', () => {
    const refusal = (text: string) => {
      try {
        parseFixtures(text, 'f.json');
        return 'accepted';
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(refusal('{"apps": []}')).toBe(
      'f.json:1: field "apps" Too small: expected array to have >=1 items.',
    );
    expect(refusal(FILE.replace('"kind": "one_time"', '"kind": "weekly"'))).toBe(
      'f.json:13: field "apps[0].plans[3].kind" must be one of: free, monthly, annual, one_time.',
    );
    expect(refusal(FILE.replace('"plan": "lifetime"', '"plan": "gold"'))).toBe(
      'f.json:21: field "apps[0].users[3].plan" names no plan of this app.',
    );
    expect(refusal(FILE.replace('"user": "usr_trial"', '"user": "usr_nobody"'))).toBe(
      'f.json:24: field "apps[0].grants[0].user" names no test user of this app with that id, nor the developer.',
    );
    expect(refusal(FILE.replace('"id": "usr_late"', '"id": "usr_trial"'))).toBe(
      'f.json:20: field "apps[0].users[2].id" repeats "usr_trial".',
    );
    expect(refusal(FILE.replace('"name": "Invoices",', '"name": "Invoices", "colour": "red",'))).toBe(
      'f.json:6: field "apps[0].colour" is not a fixtures field.',
    );
    expect(refusal('{\n  "apps": [\n    {"name": "A",}\n  ]\n}')).toMatch(/^f\.json:3: is not valid JSON/);
  });

  it('is checked by the rules the API applies: URLs, scopes, one grant per token, the clock, depth', () => {
    const refusal = (text: string) => {
      try {
        parseFixtures(text, 'f.json');
        return 'accepted';
      } catch (e) {
        return (e as Error).message;
      }
    };
    const withApp = (extra: string) => FILE.replace('"name": "Invoices",', `"name": "Invoices", ${extra},`);
    for (const bad of ['javascript:alert(1)', 'file:///etc/passwd', 'data:text/html,<b>x</b>']) {
      expect(refusal(withApp(`"webhook_url": ${JSON.stringify(bad)}`))).toBe(
        'f.json:6: field "apps[0].webhook_url" must be an http or https URL.',
      );
      expect(refusal(withApp(`"redirect_uris": [${JSON.stringify(bad)}]`))).toBe(
        'f.json:6: field "apps[0].redirect_uris[0]" must be an http or https URL.',
      );
    }
    expect(refusal(withApp('"embed_url": "http://embed.example/"'))).toBe(
      'f.json:6: field "apps[0].embed_url" must use https unless it is a loopback address.',
    );
    // A test user never holds the developer's scope; the developer may.
    expect(
      refusal(FILE.replace('"scopes": ["identity:read", "entitlements:read"]', '"scopes": ["apps:write"]')),
    ).toBe(
      'f.json:24: field "apps[0].grants[0].scopes" gives a test user "apps:write", which is the developer\'s own; a test user has only identity:read and entitlements:read.',
    );
    expect(
      refusal(
        FILE.replace(
          '"user": "usr_trial", "scopes": ["identity:read", "entitlements:read"]',
          '"user": "usr_dev1", "scopes": ["apps:write"]',
        ),
      ),
    ).toBe('accepted');
    // One access token in two grants.
    const twice = FILE.replace(
      '"access_token": "at_fixed_access_token_0001" }]',
      '"access_token": "at_fixed_access_token_0001" }, { "user": "usr_annual", "scopes": ["identity:read"], "access_token": "at_fixed_access_token_0001" }]',
    );
    expect(refusal(twice)).toBe(
      'f.json:24: field "apps[0].grants[1].access_token" repeats "at_fixed_access_token_0001".',
    );
    // The clock: a real time, from 1970, at most 100 years ahead.
    expect(refusal(FILE.replace('2026-03-01T09:00:00Z', '0000-01-01T00:00:00Z'))).toMatch(
      /^f\.json:2: field "clock" must be a real ISO 8601 time/,
    );
    expect(refusal(FILE.replace('2026-03-01T09:00:00Z', '1969-12-31T00:00:00Z'))).toMatch(
      /^f\.json:2: field "clock" must be from 1970-01-01 to at most 100 years ahead of real time/,
    );
    const far = `${new Date().getUTCFullYear() + 101}-01-01T00:00:00Z`;
    expect(refusal(FILE.replace('2026-03-01T09:00:00Z', far))).toMatch(
      /^f\.json:2: field "clock" must be from 1970/,
    );
    // 200,000 levels: a clear refusal with the line, not a stack overflow.
    const deep = `{"apps": [{"name": "A", "plans": ${'['.repeat(200_000)}${']'.repeat(200_000)}}]}`;
    expect(refusal(deep)).toBe('f.json:1: nests deeper than 64 levels; a fixtures file needs 6.');
  });
});
