import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runMkt } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';

const ctx = useSandbox({ dirPerTest: true });
let env: Record<string, string>;
let proFeature: string;

beforeAll(async () => {
  const res = await fetch(`${ctx.sandbox.siteUrl}/api/v1/apps/${ctx.sandbox.seed.app.id}/plans`, {
    headers: { 'x-api-key': ctx.sandbox.seed.test_key },
  });
  const plans = ((await res.json()) as { data: Array<{ id: string; features: string[] }> }).data;
  const ada = ctx.sandbox.seed.users[0]!;
  proFeature = plans
    .find((p) => p.id === ada.plan)!
    .features.find((f) => !plans.find((p) => p.id === 'free')?.features.includes(f))!;
});
beforeEach(() => {
  env = { MKT_SITE_URL: ctx.sandbox.siteUrl, MKT_API_KEY: ctx.sandbox.seed.test_key };
});

const mkt = (args: string[], extra: Record<string, string | undefined> = {}) =>
  runMkt(args, ctx.dir, { env: { ...env, ...extra } });

describe('mkt whoami', () => {
  it('prints the key owner as a summary, and the full document with --json', async () => {
    const text = await mkt(['whoami']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`ID:\\s+${ctx.sandbox.seed.developer.id}`));
    expect(text.stdout).toMatch(new RegExp(`Email:\\s+${ctx.sandbox.seed.developer.email}`));
    const json = await mkt(['whoami', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({
      id: ctx.sandbox.seed.developer.id,
      email: ctx.sandbox.seed.developer.email,
      name: ctx.sandbox.seed.developer.name,
      avatar_url: expect.any(String),
    });
  });

  it('says to sign in (exit 4) when there is no credential, with the line that works here, also as JSON', async () => {
    const line = `mkt login --client-id ${ctx.sandbox.seed.app.client_id} --scope apps:write`;
    const res = await mkt(['whoami'], { MKT_API_KEY: undefined });
    expect(res.code).toBe(4);
    expect(res.stderr).toContain(`Try: ${line}`);
    const json = await mkt(['whoami', '--json'], { MKT_API_KEY: undefined });
    expect(json.code).toBe(4);
    expect(JSON.parse(json.stdout)).toMatchObject({
      error: { code: 'not_logged_in', hints: [line] },
    });
  });
});

describe('mkt entitlements --feature', () => {
  it('exits 0 for an active subscriber whose plan has the feature', async () => {
    const ada = ctx.sandbox.seed.users.find(
      (u) => u.status === 'active' && u.plan === ctx.sandbox.seed.users[0]!.plan,
    )!;
    const res = await mkt(['entitlements', '--user', ada.id, '--feature', proFeature]);
    expect(res.stderr).toContain(`includes "${proFeature}"`);
    expect(res.code).toBe(0);
    expect(res.stdout).toBe('');
  });

  it('keeps a past-due subscriber in (until the grace period ends), and exits 3 with why for a plan without the feature', async () => {
    // docs/DECISIONS.md §5: past_due keeps paid access until expires_at (the end of the grace period).
    const pat = ctx.sandbox.seed.users.find((u) => u.status === 'past_due')!;
    const late = await mkt(['entitlements', '--user', pat.id, '--feature', proFeature]);
    expect(late.code).toBe(0);
    expect(late.stderr).toContain('past_due');
    const fred = ctx.sandbox.seed.users.find((u) => u.plan === 'free')!;
    const free = await mkt(['entitlements', '--user', fred.id, '--feature', proFeature]);
    expect(free.code).toBe(3);
    expect(free.stderr).toContain(`does not include "${proFeature}"`);
    const json = await mkt(['entitlements', '--user', fred.id, '--feature', proFeature, '--json']);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({ user_id: fred.id, plan: 'free' });
  });

  it('refuses a malformed user id (exit 2) and reports an unknown user (exit 1)', async () => {
    expect((await mkt(['entitlements', '--user', 'bob'])).code).toBe(2);
    const missing = await mkt(['entitlements', '--user', 'usr_doesnotexist']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('usr_doesnotexist');
  });
});
