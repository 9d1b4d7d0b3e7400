import { beforeAll, describe, expect, it } from 'vitest';
import { developerToken, useSandbox } from '../support/sandbox.js';

// Every refusal the sandbox gives, walked through the CLI as each kind of user meets it: one true
// sentence (never two glued), and hints that never repeat the failing command nor offer a step this
// credential cannot take.

const ctx = useSandbox();
let dev: string;
let devNoWrite: string;
let testUser: string;
let otherApp: string;
let fred: string;
let cancelled: string;

beforeAll(async () => {
  const { seed } = ctx.sandbox;
  dev = await developerToken(ctx.sandbox, ['identity:read', 'entitlements:read', 'apps:write']);
  devNoWrite = await developerToken(ctx.sandbox, ['identity:read']);
  const ada = seed.users.find((u) => u.status === 'active')!.id;
  const auth = await ctx.mkt(['simulator', 'authorize', '--user', ada]);
  testUser = auth.stdout.trim();
  const other = await ctx.mkt(['apps', 'create', '--name', 'Other', '--json'], {
    MKT_API_KEY: undefined,
    MKT_ACCESS_TOKEN: dev,
  });
  otherApp = JSON.parse(other.stdout).id;
  // A paid plan on the app without a payment account, a user on the free plan, one already cancelled.
  const plan = await ctx.mkt(
    [
      'plans',
      'create',
      '--app',
      otherApp,
      '--name',
      'Gold',
      '--kind',
      'monthly',
      '--price',
      '5',
      '--currency',
      'EUR',
    ],
    { MKT_API_KEY: undefined, MKT_ACCESS_TOKEN: dev },
  );
  expect(plan.code, plan.stderr).toBe(0);
  fred = seed.users.find((u) => u.plan === 'free')!.id;
  const user = await ctx.mkt(['simulator', 'users', 'create', '--plan', 'pro-monthly', '--json']);
  cancelled = JSON.parse(user.stdout).id;
  expect((await ctx.mkt(['simulator', 'users', 'cancel', cancelled])).code).toBe(0);
}, 60_000);

const asToken = (token: () => string) => () => ({ MKT_API_KEY: undefined, MKT_ACCESS_TOKEN: token() });
const asKey = () => ({});
const asLiveKey = () => ({ MKT_API_KEY: ctx.sandbox.seed.live_key });

const cases: Array<{ name: string; env: () => Record<string, string | undefined>; argv: () => string[] }> = [
  { name: 'a key creating an app', env: asKey, argv: () => ['apps', 'create', '--name', 'X'] },
  { name: 'a key on another app', env: asKey, argv: () => ['plans', 'list', '--app', otherApp] },
  { name: 'a test user listing apps', env: asToken(() => testUser), argv: () => ['apps', 'list'] },
  { name: 'a sign-in without apps:write', env: asToken(() => devNoWrite), argv: () => ['apps', 'list'] },
  {
    name: "the developer reading a test user's entitlement",
    env: asToken(() => dev),
    argv: () => ['entitlements', '--user', ctx.sandbox.seed.users[0]!.id],
  },
  {
    name: 'a live key on the simulator',
    env: asLiveKey,
    argv: () => ['trigger', 'user.revoked', '--user', ctx.sandbox.seed.users[0]!.id],
  },
  { name: 'an unknown app', env: asKey, argv: () => ['apps', 'get', 'app_123'] },
  { name: 'an unknown plan', env: asKey, argv: () => ['plans', 'get', 'gold'] },
  // Every refusal of the simulator and of a subscription's life (each error code the sandbox gives).
  {
    name: 'not_found: an unknown test user',
    env: asKey,
    argv: () => ['trigger', 'subscription.cancelled', '--user', 'usr_nonexistent1'],
  },
  {
    name: 'not_found: an unknown plan to subscribe to',
    env: asKey,
    argv: () => ['trigger', 'subscription.created', '--user', fred, '--plan', 'platinum'],
  },
  {
    name: 'same_plan: the plan the user is on',
    env: asKey,
    argv: () => ['trigger', 'subscription.created', '--user', fred, '--plan', 'free'],
  },
  { name: 'not_cancellable: a free plan', env: asKey, argv: () => ['simulator', 'users', 'cancel', fred] },
  {
    name: 'already_cancelled',
    env: asKey,
    argv: () => ['trigger', 'subscription.cancelled', '--user', cancelled],
  },
  {
    name: 'payment_declined: a user who is not created',
    env: asKey,
    argv: () => ['simulator', 'users', 'create', '--plan', 'pro-monthly', '--payment', 'declines'],
  },
  {
    name: 'payouts_not_linked: a paid plan on an app without a payment account',
    env: asToken(() => dev),
    argv: () => ['simulator', 'users', 'create', '--plan', 'gold', '--app', otherApp],
  },
  {
    name: 'no_test_users: an event for an app without test users',
    env: asToken(() => dev),
    argv: () => ['trigger', 'user.revoked', '--app', otherApp],
  },
  {
    name: 'forbidden: the simulator authorizing the developer',
    env: asKey,
    argv: () => ['simulator', 'authorize', '--user', ctx.sandbox.seed.developer.id],
  },
  {
    name: "forbidden: the simulator granting the developer's scope",
    env: asKey,
    argv: () => ['simulator', 'authorize', '--user', fred, '--scope', 'apps:write'],
  },
];

describe('refusals', () => {
  for (const c of cases) {
    it(`${c.name}: one sentence, and hints that are not the failing command`, async () => {
      const argv = c.argv();
      const res = await ctx.mkt([...argv, '--json'], c.env());
      expect(res.code, res.stdout + res.stderr).not.toBe(0);
      const { error } = JSON.parse(res.stdout) as {
        error: { code: string; message: string; hints: string[] };
      };
      const named = /^([a-z_]+)(?::|$)/.exec(c.name)?.[1];
      if (named) expect(error.code).toBe(named);
      // One sentence: a capital (or quote) first, one final stop, no second sentence run into it.
      expect(error.message).toMatch(/^[A-Z"][^\n]*[.?]$/);
      expect(error.message.split(/(?<=[.?!])\s+(?=[A-Z])/)).toHaveLength(1);
      expect(error.message).not.toMatch(/apps:write [a-z]/);
      // The server's sentence is about its decision; what to run is the CLI's hint, never in the message.
      expect(error.message).not.toMatch(/\bmkt [a-z]/);
      expect(error.message).not.toMatch(/[;:] *(list|see|create|change|link|subscribe|sign in)\b[^.]*:/i);
      const failing = ['mkt', ...argv].join(' ');
      for (const hint of error.hints) expect(hint.split('   (')[0]).not.toBe(failing);
      expect(new Set(error.hints).size).toBe(error.hints.length);
      // Each hint names only users that exist here (never a user the refused request did not create).
      for (const id of error.hints.join(' ').match(/usr_\w+/g) ?? [])
        expect([...ctx.sandbox.seed.users.map((u) => u.id), fred, cancelled, 'usr_nonexistent1']).toContain(
          id,
        );
    });
  }

  it('a key never gets "--scope" as a hint it can use without signing in', async () => {
    const res = await ctx.mkt(['plans', 'list', '--app', otherApp, '--json']);
    const { error } = JSON.parse(res.stdout) as { error: { message: string; hints: string[] } };
    expect(error.message).toContain('This API key belongs to another app');
    expect(error.message).not.toContain('belongs to another developer');
    expect(error.hints.join('\n')).not.toContain('--scope');
  });

  it("the developer reading a test user's entitlement is told the truth and a way that works", async () => {
    const user = ctx.sandbox.seed.users[0]!.id;
    const res = await ctx.mkt(['entitlements', '--user', user], {
      MKT_API_KEY: undefined,
      MKT_ACCESS_TOKEN: dev,
    });
    expect(res.code).toBe(4);
    expect(res.stderr).not.toContain('another developer');
    expect(res.stderr).not.toContain('mkt apps use');
    expect(res.stderr).toContain('mkt keys create --mode test');
    // The hint, followed (with the developer's app as the profile's default): a test key of the
    // developer's own app reads the user's entitlement.
    const devEnv = { MKT_API_KEY: undefined, MKT_ACCESS_TOKEN: dev };
    expect((await ctx.mkt(['apps', 'use', ctx.sandbox.seed.app.id], devEnv)).code).toBe(0);
    const key = await ctx.mkt(['keys', 'create', '--mode', 'test'], {
      MKT_API_KEY: undefined,
      MKT_ACCESS_TOKEN: dev,
    });
    expect(key.code, key.stderr).toBe(0);
    const ent = await ctx.mkt(['entitlements', '--user', user, '--json'], { MKT_API_KEY: key.stdout.trim() });
    expect(ent.code, ent.stderr).toBe(0);
    expect(JSON.parse(ent.stdout).user_id).toBe(user);
  });
});
