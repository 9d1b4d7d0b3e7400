import { describe, expect, it } from 'vitest';
import { runMkt } from '../support/cli.js';
import { runMktInTty } from '../support/terminal.js';
import { useSandbox } from '../support/sandbox.js';
import { expectRefusedBeforeAnyRequest, startRecordingServer } from '../apps/helpers.js';

const ctx = useSandbox();
const mkt = ctx.mkt;
const app = () => ctx.sandbox.seed.app.id;

/** The plans as the server holds them (not through the CLI). */
async function serverPlans(): Promise<Array<Record<string, unknown>>> {
  const res = await fetch(`${ctx.sandbox.siteUrl}/api/v1/apps/${app()}/plans?limit=100`, {
    headers: { 'x-api-key': ctx.sandbox.seed.test_key },
  });
  return ((await res.json()) as { data: Array<Record<string, unknown>> }).data;
}

describe('mkt plans create', () => {
  it('derives the id from the name and sends the price in minor units', async () => {
    const res = await mkt([
      'plans',
      'create',
      '--app',
      app(),
      '--name',
      'Team Annual',
      '--kind',
      'annual',
      '--price',
      '99.50',
      '--currency',
      'usd',
      '--feature',
      'export',
      '--feature',
      'api',
      '--api-call-limit',
      '5000',
      '--json',
    ]);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({
      id: 'team-annual',
      kind: 'annual',
      price: { amount: 9950, currency: 'USD' },
      features: ['export', 'api'],
      api_call_limit: 5000,
    });
    expect((await serverPlans()).find((p) => p.id === 'team-annual')).toMatchObject({
      price: { amount: 9950 },
    });
  });

  it('sends one-time as one_time and keeps the currency’s own decimals (JPY 0, KWD 3)', async () => {
    const jpy = await mkt([
      'plans',
      'create',
      '--app',
      app(),
      '--id',
      'lifetime-jp',
      '--name',
      'Lifetime',
      '--kind',
      'one-time',
      '--price',
      '5000',
      '--currency',
      'JPY',
      '--json',
    ]);
    expect(jpy.code, jpy.stderr).toBe(0);
    expect(JSON.parse(jpy.stdout)).toMatchObject({
      kind: 'one_time',
      price: { amount: 5000, currency: 'JPY' },
    });
    const kwd = await mkt([
      'plans',
      'create',
      '--app',
      app(),
      '--name',
      'Gulf Monthly',
      '--kind',
      'monthly',
      '--price',
      '1.250',
      '--currency',
      'KWD',
      '--json',
    ]);
    expect(JSON.parse(kwd.stdout)).toMatchObject({
      id: 'gulf-monthly',
      price: { amount: 1250, currency: 'KWD' },
    });
  });

  it('creates a free plan without a price', async () => {
    const res = await mkt([
      'plans',
      'create',
      '--app',
      app(),
      '--name',
      'Starter',
      '--kind',
      'free',
      '--json',
    ]);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({
      id: 'starter',
      kind: 'free',
      price: null,
      api_call_limit: null,
    });
  });

  it('shows the server’s refusal of a duplicate id with exit 1', async () => {
    const res = await mkt([
      'plans',
      'create',
      '--app',
      app(),
      '--id',
      'free',
      '--name',
      'Free again',
      '--kind',
      'free',
    ]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('already has a plan "free"');
  });
});

describe('mkt plans list / get / update', () => {
  it('prints tab-separated rows off a terminal, kinds and prices as people write them', async () => {
    const res = await mkt(['plans', 'list', '--app', app()]);
    expect(res.code, res.stderr).toBe(0);
    const rows = res.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(rows.every((r) => r.length === 9)).toBe(true);
    expect(rows.find((r) => r[0] === 'pro-monthly')?.slice(0, 4)).toEqual([
      'pro-monthly',
      'Pro (monthly)',
      'monthly',
      '9.99 USD',
    ]);
    expect(rows.find((r) => r[0] === 'lifetime-jp')?.slice(2, 4)).toEqual(['one-time', '5000 JPY']);
  });

  it('prints the server objects as a JSON array', async () => {
    const res = await mkt(['plans', 'list', '--app', app(), '--json']);
    const plans = JSON.parse(res.stdout) as Array<Record<string, unknown>>;
    expect(plans.map((p) => p.id)).toEqual((await serverPlans()).map((p) => p.id));
  });

  it('gets one plan and changes only the fields given', async () => {
    const res = await mkt([
      'plans',
      'update',
      'team-annual',
      '--app',
      app(),
      '--price',
      '120',
      '--currency',
      'EUR',
      '--api-call-limit',
      'none',
      '--json',
    ]);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({
      price: { amount: 12000, currency: 'EUR' },
      api_call_limit: null,
      features: ['export', 'api'],
    });
    const got = await mkt(['plans', 'get', 'team-annual', '--app', app(), '--json']);
    expect(JSON.parse(got.stdout)).toMatchObject({ name: 'Team Annual', price: { amount: 12000 } });
    const missing = await mkt(['plans', 'get', 'no-such-plan', '--app', app()]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No plan "no-such-plan"');
  });
});

describe('mkt plans delete', () => {
  it('deletes a plan without subscribers (204)', async () => {
    const res = await mkt(['plans', 'delete', 'starter', '--app', app(), '--yes', '--json']);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({ id: 'starter', deleted: true, archived: false });
    expect((await serverPlans()).some((p) => p.id === 'starter')).toBe(false);
  });

  it('archives a plan with subscribers (200) and says so', async () => {
    const res = await mkt(['plans', 'delete', 'pro-monthly', '--app', app(), '--yes']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/archived, not deleted/);
    expect((await serverPlans()).find((p) => p.id === 'pro-monthly')).toMatchObject({ archived: true });
  });

  it('refuses without --yes off a terminal and deletes nothing', async () => {
    const res = await mkt(['plans', 'delete', 'gulf-monthly', '--app', app()]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--yes');
    expect((await serverPlans()).some((p) => p.id === 'gulf-monthly')).toBe(true);
  });

  it('on a terminal, "n" says "Nothing was changed." (no "Error:"), exits 1 and deletes nothing', async () => {
    const res = await runMktInTty(['plans', 'delete', 'gulf-monthly', '--app', app()], ctx.dir, {
      env: ctx.env,
      waitFor: 'Delete plan',
      answer: 'n\r',
    });
    expect(res.stdout).toContain('Nothing was changed.');
    expect(res.stdout).not.toContain('Error');
    expect(res.code, res.stdout).toBe(1);
    expect((await serverPlans()).some((p) => p.id === 'gulf-monthly')).toBe(true);
  });
});

describe('bad input is refused before any request', () => {
  const create = ['plans', 'create', '--app', 'app_x', '--name', 'Pro'];
  const cases: Array<[string, string[], RegExp]> = [
    ['an unknown kind', [...create, '--kind', 'weekly'], /free, monthly, annual, one-time/],
    [
      'too many decimals for USD',
      [...create, '--kind', 'monthly', '--price', '9.999', '--currency', 'USD'],
      /at most 2 decimals/,
    ],
    [
      'decimals for JPY',
      [...create, '--kind', 'monthly', '--price', '10.5', '--currency', 'JPY'],
      /no decimals/,
    ],
    [
      'a price that is not a positive decimal',
      [...create, '--kind', 'monthly', '--price', '-3', '--currency', 'USD'],
      /positive/,
    ],
    [
      'an unknown currency',
      [...create, '--kind', 'monthly', '--price', '9.99', '--currency', 'XYZ'],
      /ISO 4217/,
    ],
    ['a price without a currency', [...create, '--kind', 'monthly', '--price', '9.99'], /--currency/],
    [
      'a free plan with a price',
      [...create, '--kind', 'free', '--price', '1', '--currency', 'USD'],
      /free plan has no price/,
    ],
    ['a paid plan without a price', [...create, '--kind', 'annual'], /needs a price/],
    ['a bad slug', [...create, '--id', 'Pro Plan', '--kind', 'free'], /not a plan id/],
    [
      'a name with no slug',
      ['plans', 'create', '--app', 'app_x', '--name', '!!!', '--kind', 'free'],
      /pass --id/,
    ],
    ['a bad api call limit', [...create, '--kind', 'free', '--api-call-limit', '-5'], /whole number/],
    [
      'a trial on a one-time plan',
      [...create, '--kind', 'one-time', '--price', '5', '--currency', 'USD', '--trial-days', '14'],
      /one-time plan has no trial/,
    ],
    ['a trial of more than a year', [...create, '--kind', 'monthly', '--trial-days', '400'], /--trial-days/],
    ['a feature with spaces', [...create, '--kind', 'free', '--feature', 'bulk export'], /one word/],
    ['an update with nothing to change', ['plans', 'update', 'pro', '--app', 'app_x'], /Nothing to change/],
    ['a bad plan id on get', ['plans', 'get', '../apps', '--app', 'app_x'], /not a plan id/],
    ['delete without --yes', ['plans', 'delete', 'pro', '--app', 'app_x'], /--yes/],
    [
      'create without --name, named as typed',
      ['plans', 'create', '--app', 'app_x', '--kind', 'free'],
      /^Error: Missing required flag --name\.$/m,
    ],
    [
      'get without the plan id',
      ['plans', 'get', '--app', 'app_x'],
      /^Error: Missing required argument PLAN: plan id/m,
    ],
  ];

  it.each(cases)('%s: exit 2', (_name, args, message) =>
    expectRefusedBeforeAnyRequest(args, ctx.dir, message),
  );
});

describe('pagination', () => {
  it('follows next_cursor across three pages', async () => {
    const pages: Record<
      string,
      { data: Array<{ id: string }>; has_more: boolean; next_cursor: string | null }
    > = {
      '': { data: [{ id: 'a' }, { id: 'b' }], has_more: true, next_cursor: 'p2' },
      p2: { data: [{ id: 'c' }, { id: 'd' }], has_more: true, next_cursor: 'p3' },
      p3: { data: [{ id: 'e' }], has_more: false, next_cursor: null },
    };
    const server = await startRecordingServer((req) => {
      const cursor = new URL(req.url, 'http://x').searchParams.get('cursor') ?? '';
      return { status: 200, body: pages[cursor] };
    });
    try {
      const res = await runMkt(['plans', 'list', '--app', 'app_x', '--json'], ctx.dir, {
        env: { MKT_SITE_URL: server.url, MKT_API_KEY: 'test_paging' },
      });
      expect(res.code, res.stderr).toBe(0);
      expect((JSON.parse(res.stdout) as Array<{ id: string }>).map((p) => p.id)).toEqual([
        'a',
        'b',
        'c',
        'd',
        'e',
      ]);
      expect(server.seen.map((s) => s.url)).toEqual([
        '/api/v1/apps/app_x/plans?limit=100',
        '/api/v1/apps/app_x/plans?limit=100&cursor=p2',
        '/api/v1/apps/app_x/plans?limit=100&cursor=p3',
      ]);
    } finally {
      await server.close();
    }
  });

  it('accepts a bare JSON array from a server without pagination', async () => {
    const server = await startRecordingServer(() => ({
      status: 200,
      body: [{ id: 'only', name: 'Only', kind: 'free', price: null }],
    }));
    try {
      const res = await runMkt(['plans', 'list', '--app', 'app_x'], ctx.dir, {
        env: { MKT_SITE_URL: server.url, MKT_API_KEY: 'test_paging' },
      });
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout.split('\t').slice(0, 4)).toEqual(['only', 'Only', 'free', '-']);
      expect(server.seen).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('lists more plans than the sandbox puts on its default page of 20', async () => {
    const made = [];
    for (let i = 0; i < 22; i++) made.push(`bulk-${i}`);
    // 22 more plans on top of the seeded ones crosses the sandbox's default page of 20; the CLI asks for 100,
    // so this checks the real server's envelope rather than several pages.
    for (const id of made) {
      await fetch(`${ctx.sandbox.siteUrl}/api/v1/apps/${app()}/plans`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': ctx.sandbox.seed.test_key },
        body: JSON.stringify({ id, name: id, kind: 'free' }),
      });
    }
    const res = await mkt(['plans', 'list', '--app', app(), '--json']);
    const ids = (JSON.parse(res.stdout) as Array<{ id: string }>).map((p) => p.id);
    expect(ids).toEqual(expect.arrayContaining(made));
    expect(ids.length).toBeGreaterThan(20);
  });
});
