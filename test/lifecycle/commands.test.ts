import { describe, expect, it, vi } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  developerToken,
  startSandboxProcess,
  useSandbox,
  killAllSandboxProcesses,
} from '../support/sandbox.js';
import { baseEnv, MKT_BIN, runMkt, tempDir } from '../support/cli.js';
import { typeInTerminal } from '../support/terminal.js';
import { api } from './helpers.js';
import { answerWith, startServer } from '../support/server.js';
import { afterEach } from 'vitest';

// Each test runs a dozen commands against its own sandbox: more than the default 30 s on a busy machine.
vi.setConfig({ testTimeout: 90_000 });
const ctx = useSandbox({ sandboxPerTest: true });
const app = () => ctx.sandbox.seed.app.id;
/** The clock is the sandbox's and entitlements name the user: those commands take no --app. */
const takesApp = (args: string[]) =>
  !(args[0] === 'entitlements' || (args[0] === 'simulator' && args[1] === 'clock'));
const mkt = (args: string[], extra: Record<string, string | undefined> = {}) =>
  ctx.mkt(takesApp(args) ? [...args, '--app', app()] : args, extra);
const json = async (args: string[], extra: Record<string, string | undefined> = {}) => {
  const r = await mkt([...args, '--json'], extra);
  if (r.code !== 0) throw new Error(`mkt ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout);
};
const call = (method: string, path: string, options: { token?: string; body?: unknown } = {}) =>
  api(ctx, method, path, options);
afterEach(() => killAllSandboxProcesses());

describe('mkt simulator clock', () => {
  it('shows business time, moves it forward only, and refuses a bad duration', async () => {
    const before = await json(['simulator', 'clock']);
    expect(before.offset_s).toBe(0);
    const moved = await json(['simulator', 'clock', 'advance', '2d']);
    expect(moved.offset_s).toBeGreaterThanOrEqual(172_800);
    expect(Date.parse(moved.now) - Date.now()).toBeGreaterThan(172_000_000);
    const bad = await mkt(['simulator', 'clock', 'advance', '2 days']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('is not a duration');
    const back = await mkt(['simulator', 'clock', 'advance', '--to', new Date().toISOString()]);
    expect(back.code).toBe(1);
    expect(back.stderr).toContain('only moves forward');
    // A date that does not exist, or a year of five digits, is refused before any request (exit 2).
    for (const to of ['2026-02-30', '20260-01-01', '+275760-09-13T00:00:00.000Z']) {
      const unreal = await mkt(['simulator', 'clock', 'advance', '--to', to]);
      expect(unreal.code, to).toBe(2);
      expect(unreal.stderr).toContain(`--to "${to}" is not a real ISO 8601 date or time`);
    }
    expect((await json(['simulator', 'clock'])).offset_s).toBe(moved.offset_s);
    // Transport time is real: a token issued now works, whatever business time says.
    const user = await json(['simulator', 'users', 'create', '--plan', 'free']);
    const token = (await json(['simulator', 'authorize', '--user', user.id])).access_token;
    expect((await call('GET', '/whoami', { token })).status).toBe(200);
  });

  it('on a terminal, a long advance shows its progress and ends with a summary by transition and event', async () => {
    await json(['simulator', 'users', 'create', '--plan', 'pro-monthly', '--payment', 'declines_renewals']);
    const line = [process.execPath, MKT_BIN, 'simulator', 'clock', 'advance', '60d'].join(' ');
    const t = typeInTerminal(line, { env: { ...baseEnv(ctx.dir), ...ctx.env, TERM: 'dumb', NO_COLOR: '1' } });
    const code = await t.exit;
    const screen = t.screen();
    expect(code, screen).toBe(0);
    expect(screen).toMatch(/… \d{4}-\d\d-\d\dT[\d:.]+Z \(\d+ %\)/);
    expect(screen).toMatch(/renewal_declined {2}active → past_due/);
    expect(screen).toMatch(/\n +\d+ {2}renewal_declined\r?\n/);
    expect(screen).toMatch(/\n +\d+ {2}event subscription\.cancelled\r?\n/);
    expect(screen).toContain('Business time is now');
  });

  it('survives a restart (kill -9)', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'mkt-life-'));
    const config = await tempDir();
    try {
      let p = await startSandboxProcess(dataDir, config.path);
      const env = { MKT_SITE_URL: p.siteUrl, MKT_API_KEY: p.seed.test_key };
      const run = (args: string[]) => runMkt([...args, '--json'], config.path, { env });
      const moved = JSON.parse((await run(['simulator', 'clock', 'advance', '10d'])).stdout);
      await p.kill9();
      p = await startSandboxProcess(dataDir, config.path);
      env.MKT_SITE_URL = p.siteUrl;
      const after = JSON.parse((await run(['simulator', 'clock'])).stdout);
      expect(moved.offset_s).toBeGreaterThanOrEqual(864_000);
      expect(after.offset_s).toBe(moved.offset_s);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
      await config.remove();
    }
  });
});

describe('mkt simulator users', () => {
  it('lists, gets, updates (payment, plan change with its events), cancels and revokes', async () => {
    const receiver = await startServer(answerWith(200));
    try {
      expect((await call('PATCH', `/apps/${app()}`, { body: { webhook_url: receiver.url } })).status).toBe(
        200,
      );
      const user = await json([
        'simulator',
        'users',
        'create',
        '--plan',
        'free',
        '--email',
        'life@example.test',
      ]);
      const listed = await json(['simulator', 'users', 'list']);
      expect(listed.map((u: { id: string }) => u.id)).toContain(user.id);
      const updated = await json(['simulator', 'users', 'update', user.id, '--payment', 'declines_renewals']);
      expect(updated.payment_behaviour).toBe('declines_renewals');
      const moved = await json(['simulator', 'users', 'update', user.id, '--plan', 'pro-monthly']);
      expect(moved).toMatchObject({ plan: 'pro-monthly', status: 'active' });
      const got = await json(['simulator', 'users', 'get', user.id]);
      expect(got).toMatchObject({
        email: 'life@example.test',
        plan: 'pro-monthly',
        payment_behaviour: 'declines_renewals',
      });
      const token = (await json(['simulator', 'authorize', '--user', user.id])).access_token;
      const cancelled = await json(['simulator', 'users', 'cancel', user.id]);
      expect(cancelled).toMatchObject({ status: 'cancelled', expires_at: got.expires_at });
      const again = await mkt(['simulator', 'users', 'cancel', user.id]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('already cancelled');
      const revoked = await json(['simulator', 'users', 'revoke', user.id]);
      expect(revoked).toMatchObject({ user_id: user.id, tokens_revoked: 2 });
      expect((await call('GET', '/whoami', { token })).status).toBe(401);
      const events = (await receiver.waitFor(4)).map((s) => JSON.parse(s.body));
      expect(events.map((e) => `${e.event}:${e.data.reason ?? ''}`)).toEqual([
        'subscription.created:',
        'user.authorized:',
        'subscription.cancelled:requested',
        'user.revoked:',
      ]);
      expect(events[3].data).toEqual({
        user_id: user.id,
        app_id: app(),
        scopes: ['entitlements:read', 'identity:read'],
      });
    } finally {
      await receiver.close();
    }
  });
});

describe("a plan's free trial", () => {
  it('plans create --trial-days: a new subscriber is trialing, then the first charge at trial end', async () => {
    const plan = await json([
      'plans',
      'create',
      '--name',
      'Trial Monthly',
      '--kind',
      'monthly',
      '--price',
      '9.99',
      '--currency',
      'USD',
      '--trial-days',
      '14',
    ]);
    expect(plan.trial_days).toBe(14);
    const shown = await mkt(['plans', 'get', plan.id]);
    expect(shown.stdout).toMatch(/^trial: +14 days$/m);
    const user = await json(['simulator', 'users', 'create', '--plan', plan.id]);
    const trial = await json(['entitlements', '--user', user.id]);
    expect(trial.status).toBe('trialing');
    expect(Date.parse(trial.expires_at) - Date.now()).toBeGreaterThan(13.9 * 86_400_000);
    expect(await json(['apps', 'payments', 'list'])).not.toContainEqual(
      expect.objectContaining({ user_id: user.id }),
    );
    await json(['simulator', 'clock', 'advance', '15d']);
    expect((await json(['entitlements', '--user', user.id])).status).toBe('active');
    const charges = (await json(['apps', 'payments', 'list'])).filter(
      (x: { user_id: string }) => x.user_id === user.id,
    );
    expect(charges).toMatchObject([{ kind: 'initial', outcome: 'succeeded', amount: 999 }]);
    // Changed later: only new subscribers get the new trial; 0 turns it off.
    expect((await json(['plans', 'update', plan.id, '--trial-days', '0'])).trial_days).toBe(0);
    const later = await json(['simulator', 'users', 'create', '--plan', plan.id]);
    expect((await json(['entitlements', '--user', later.id])).status).toBe('active');
  });
});

describe('usage and the one access rule', () => {
  it('counts requests made with the user token, resets at renewal, and never reads an unlimited plan as 0', async () => {
    const user = await json(['simulator', 'users', 'create', '--plan', 'pro-monthly']);
    const token = (await json(['simulator', 'authorize', '--user', user.id])).access_token;
    for (let i = 0; i < 3; i++) expect((await call('GET', '/whoami', { token })).status).toBe(200);
    const ent = await json(['entitlements', '--user', user.id]);
    expect(ent.usage).toEqual({ api_calls: 3, limit: 10_000 });
    await json(['simulator', 'clock', 'advance', '32d']);
    expect((await json(['entitlements', '--user', user.id])).usage.api_calls).toBe(0);
    await call('POST', `/apps/${app()}/plans`, {
      body: {
        id: 'unlimited',
        name: 'Unlimited',
        kind: 'monthly',
        price: { amount: 100, currency: 'USD' },
        features: ['export'],
      },
    });
    const big = await json(['simulator', 'users', 'create', '--plan', 'unlimited']);
    expect((await json(['entitlements', '--user', big.id])).usage.limit).toBe(Number.MAX_SAFE_INTEGER);
    const shown = await mkt(['entitlements', '--user', big.id]);
    expect(shown.stdout).toMatch(/Usage:\s+0 API calls \(unlimited\)/);
  });

  it('entitlements --feature and simulator check agree with the sandbox: past_due keeps access, expired does not', async () => {
    const user = await json([
      'simulator',
      'users',
      'create',
      '--plan',
      'pro-monthly',
      '--payment',
      'declines_renewals',
    ]);
    await json(['simulator', 'clock', 'advance', '32d']);
    const check = await json(['simulator', 'check', '--user', user.id, '--feature', 'export']);
    expect(check).toMatchObject({ allowed: true, reason: 'feature_in_plan', server: { allowed: true } });
    expect((await mkt(['entitlements', '--user', user.id, '--feature', 'export'])).code).toBe(0);
    await json(['simulator', 'clock', 'advance', '7d']);
    const no = await mkt(['simulator', 'check', '--user', user.id, '--feature', 'export']);
    expect(no.code).toBe(3);
    expect(no.stderr).toContain('has expired (status_expired)');
    const ent = await mkt(['entitlements', '--user', user.id, '--feature', 'export']);
    expect(ent.code).toBe(3);
    expect(ent.stderr).toContain('has expired');
  });
});

describe('mkt apps payments', () => {
  it('an unlinked app cannot sell paid plans until its payment account is linked on the processor page', async () => {
    const token = await developerToken(ctx.sandbox, ['apps:write']);
    const dev = { MKT_API_KEY: undefined, MKT_ACCESS_TOKEN: token };
    const created = await ctx.mkt(
      ['apps', 'create', '--name', 'Shop', '--redirect-uri', 'http://127.0.0.1/cb', '--json'],
      dev,
    );
    expect(created.code, created.stderr).toBe(0);
    const shop = JSON.parse(created.stdout).id as string;
    const paid = {
      id: 'gold',
      name: 'Gold',
      kind: 'monthly',
      price: { amount: 500, currency: 'EUR' },
      features: ['x'],
    };
    expect((await call('POST', `/apps/${shop}/plans`, { token, body: paid })).status).toBe(201);
    const run = (args: string[]) => ctx.mkt([...args, '--app', shop], dev);
    const refused = await run(['simulator', 'users', 'create', '--plan', 'gold']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`mkt apps payments link --app ${shop}`);
    expect((await run(['apps', 'payments', 'status'])).code).toBe(3);
    const link = await run(['apps', 'payments', 'link']);
    expect(link.code).toBe(0);
    const url = link.stdout.trim();
    expect(url).toMatch(new RegExp(`^${ctx.sandbox.siteUrl}/payouts/connect/`));
    const page = await (await fetch(url)).text();
    const form = new URLSearchParams({ decision: 'approve' });
    for (const m of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g))
      form.set(m[1]!, m[2]!);
    const approved = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ctx.sandbox.siteUrl },
      body: form,
    });
    expect(approved.status).toBe(200);
    expect((await fetch(url, { method: 'POST', body: form })).status).not.toBe(200); // single use
    const status = JSON.parse((await run(['apps', 'payments', 'status', '--json'])).stdout);
    expect(status).toMatchObject({ linked: true, account_id: expect.stringMatching(/^acct_/) });
    const buyer = await run(['simulator', 'users', 'create', '--plan', 'gold', '--json']);
    expect(buyer.code, buyer.stderr).toBe(0);
    const list = JSON.parse((await run(['apps', 'payments', 'list', '--json'])).stdout);
    expect(list).toEqual([
      expect.objectContaining({
        user_id: JSON.parse(buyer.stdout).id,
        plan: 'gold',
        amount: 500,
        currency: 'EUR',
        outcome: 'succeeded',
        kind: 'initial',
      }),
    ]);
  }, 90_000);
});
