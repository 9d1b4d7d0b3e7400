import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MKT_BIN, baseEnv, runMkt, startMkt, tempDir } from '../support/cli.js';
import { startTestSandbox, useSandbox } from '../support/sandbox.js';
import { json, startServer } from '../support/server.js';
import { typeInTerminal } from '../support/terminal.js';

// The first hour, round 3 (issue 36), walked as a new user types it: global flags before the
// command, the positional and flag forms naming each other, money and time as people write them,
// dry runs that show what is sent, the trigger's report, listen's first lines, the sandbox guide's storage
// section, and output that cannot be written. One sandbox for the file; the tests run in order
// (the clock only moves forward).

const ctx = useSandbox();
const seed = () => ctx.sandbox.seed;
const WEBHOOKS_GUIDE = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
const SANDBOX_GUIDE = readFileSync(new URL('../../docs/sandbox.md', import.meta.url), 'utf8');
const userNamed = (name: string) => seed().users.find((u) => u.name?.startsWith(name))!.id;

/** `mkt ARGS` typed into a terminal (a pseudo-terminal), against the file's sandbox. */
async function inTerminal(args: string[]): Promise<{ code: number | null; screen: string }> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const terminal = typeInTerminal([process.execPath, MKT_BIN, ...args].map(quote).join(' '), {
    env: { ...baseEnv(ctx.dir), ...ctx.env, TERM: 'dumb', NO_COLOR: '1', COLUMNS: '200' },
  });
  const code = await terminal.exit;
  return { code, screen: terminal.screen() };
}

describe('global flags may stand before the command', () => {
  it('mkt --json whoami, mkt --profile ada whoami, mkt --site-url=URL --verbose whoami', async () => {
    const first = await ctx.mkt(['--json', 'whoami']);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).email).toBe('dev@sandbox.test');
    // A key kept for profile "ada" only: the leading --profile is the one used.
    const noEnvKey = { MKT_API_KEY: undefined };
    const stored = await runMkt(['login', '--with-api-key', '--profile', 'ada'], ctx.dir, {
      env: { MKT_SITE_URL: ctx.sandbox.siteUrl },
      input: `${seed().test_key}\n`,
    });
    expect(stored.code, stored.stderr).toBe(0);
    const ada = await ctx.mkt(['--profile', 'ada', 'whoami', '--json'], noEnvKey);
    expect(ada.code, ada.stderr).toBe(0);
    expect(JSON.parse(ada.stdout).email).toBe('dev@sandbox.test');
    const other = await ctx.mkt(['--profile', 'other', 'whoami'], noEnvKey);
    expect(other.code).toBe(4);
    expect(other.stderr).toContain('with profile "other"');
    const both = await ctx.mkt([`--site-url=${ctx.sandbox.siteUrl}`, '--verbose', 'whoami']);
    expect(both.code, both.stderr).toBe(0);
    expect(both.stderr).toMatch(/GET \S+\/whoami/);
  });
});

describe('the positional and flag forms of an object name each other', () => {
  it('each refusal names the line that works, and that line works', async () => {
    const ada = userNamed('Ada');
    const app = seed().app.id;
    const cases: Array<[string[], string]> = [
      [['plans', 'get', '--plan', 'pro-monthly'], 'mkt plans get pro-monthly'],
      [['plans', 'get', '--plan=pro-monthly', '--verbose'], 'mkt plans get pro-monthly --verbose'],
      [['simulator', 'users', 'get', '--user', ada], `mkt simulator users get ${ada}`],
      [['apps', 'use', '--app', app], `mkt apps use ${app}`],
      [['entitlements', ada], `mkt entitlements --user ${ada}`],
    ];
    for (const [args, line] of cases) {
      const refused = await ctx.mkt(args);
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr, args.join(' ')).toContain(`Try: ${line}\n`);
      expect(refused.stderr.split('\n')[0], args.join(' ')).toMatch(/^Error: [^\n]+\.$/);
      const works = await ctx.mkt(line.split(' ').slice(1));
      expect(works.code, `${line}\n${works.stderr}`).toBe(0);
    }
  });
});

describe('money as people write it, from one formatter', () => {
  it('a declined charge, plans list on a terminal and the payments list agree: 9.99 USD, 1200 JPY', async () => {
    const jp = await ctx.mkt([
      'plans',
      'create',
      '--id',
      'jp-monthly',
      '--name',
      'JP monthly',
      '--kind',
      'monthly',
      '--price',
      '1200',
      '--currency',
      'JPY',
      '--feature',
      'export',
      '--trial-days',
      '14',
    ]);
    expect(jp.code, jp.stderr).toBe(0);
    for (const [plan, money] of [
      ['pro-monthly', '9.99 USD'],
      ['jp-monthly', '1200 JPY'],
    ] as const) {
      const declined = await ctx.mkt([
        'simulator',
        'users',
        'create',
        '--plan',
        plan,
        '--payment',
        'declines',
        '--trial-days',
        '0',
      ]);
      expect(declined.code).toBe(1);
      expect(declined.stderr).toContain(`The charge of ${money} for plan "${plan}" was declined`);
      // A refused request changes nothing (docs/PROTOCOL.md): the charge shown is a paid one's.
      const paid = await ctx.mkt(['simulator', 'users', 'create', '--plan', plan, '--trial-days', '0']);
      expect(paid.code, paid.stderr).toBe(0);
    }
    const payments = await ctx.mkt(['apps', 'payments', 'list']);
    expect(payments.stdout).toContain('9.99 USD');
    expect(payments.stdout).toContain('1200 JPY');
    // What people choose a plan by: price, trial and features, on the terminal's table.
    const list = await inTerminal(['plans', 'list']);
    expect(list.code, list.screen).toBe(0);
    expect(list.screen).toMatch(/ID\s+NAME\s+KIND\s+PRICE\s+TRIAL\s+FEATURES/);
    expect(list.screen).toMatch(/jp-monthly\s+JP monthly\s+monthly\s+1200 JPY\s+14 days\s+export\s/);
    expect(list.screen).toMatch(
      /pro-monthly\s+Pro \(monthly\)\s+monthly\s+9\.99 USD\s+\S+\s+basic,export,api\s/,
    );
  });
});

describe('time as people write it', () => {
  /** Business time now, as the clock answers it. */
  const clockNow = async () => {
    const r = await ctx.mkt(['simulator', 'clock', '--json']);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as { now: string; offset_s: number };
  };
  /** `expected` and the clock's now are the same moment but for the seconds real time adds. */
  const expectNear = (now: string, expected: string) =>
    expect(Math.abs(Date.parse(now) - Date.parse(expected)), `${now} vs ${expected}`).toBeLessThan(60_000);

  it('advance takes 1mo and 1y as calendars count them, and 2w and 36h', async () => {
    const to = await ctx.mkt(['simulator', 'clock', 'advance', '--to', '2031-01-31T12:00:00Z']);
    expect(to.code, to.stderr).toBe(0);
    const steps: Array<[string, string]> = [
      ['1mo', '2031-02-28T12:00:00Z'], // January 31 + a month: the end of February
      ['1y', '2032-02-28T12:00:00Z'],
      ['2w', '2032-03-13T12:00:00Z'],
      ['36h', '2032-03-15T00:00:00Z'],
    ];
    for (const [duration, expected] of steps) {
      const r = await ctx.mkt(['simulator', 'clock', 'advance', duration]);
      expect(r.code, `${duration}: ${r.stderr}`).toBe(0);
      expectNear((await clockNow()).now, expected);
    }
    const bad = await ctx.mkt(['simulator', 'clock', 'advance', '1x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"1x" is not a duration; write it like 1y, 1mo, 2w, 31d, 36h or 1d12h.');
  });

  it('simulator clock says how far ahead in days and hours, not seconds', async () => {
    const { offset_s } = await clockNow();
    const shown = await ctx.mkt(['simulator', 'clock']);
    expect(shown.code, shown.stderr).toBe(0);
    const days = Math.floor(offset_s / 86_400);
    expect(shown.stdout).toMatch(new RegExp(`Ahead of real time:\\s+${days} days( \\d+ hours?)?\\n`));
    expect(shown.stdout).not.toMatch(/\d+ s\b/);
  });
});

describe('trigger --dry-run shows what the send sends', () => {
  // Left out of the comparison, because they differ by nature between two sends: the envelope's
  // `timestamp` (real time of signing) and `cancelled_at` (business time of the cancellation, which
  // moves on with real time between the dry run and the send: both are checked to be business time).
  // A subscription.created without --user: the new test user's id (made by the send).
  it('for every event, the dry run equals the envelope the handler receives', async () => {
    const server = await startServer((_req, res) => json(res, 200, { ok: true }));
    try {
      const hook = await ctx.mkt(['apps', 'update', '--webhook-url', `${server.url}/hooks`]);
      expect(hook.code, hook.stderr).toBe(0);
      const fred = userNamed('Fred');
      const ada = userNamed('Ada');
      const cases: Array<[string, string[]]> = [
        ['subscription.created', ['--user', fred, '--plan', 'pro-monthly']],
        ['subscription.cancelled', ['--user', fred]],
        [
          'user.authorized',
          ['--user', ada, '--set', 'data.scopes=identity:read,entitlements:read,identity:read'],
        ],
        ['user.revoked', ['--user', ada]],
        ['subscription.created', []],
        ['user.authorized', []],
      ];
      const { offset_s } = JSON.parse((await ctx.mkt(['simulator', 'clock', '--json'])).stdout) as {
        offset_s: number;
      };
      expect(offset_s).toBeGreaterThan(300 * 86_400); // business time is far from real time
      for (const [event, args] of cases) {
        const what = `${event} ${args.join(' ')}`;
        const dry = await ctx.mkt(['trigger', event, ...args, '--dry-run', '--json']);
        expect(dry.code, `${what}: ${dry.stderr}`).toBe(0);
        const shown = (JSON.parse(dry.stdout) as { envelope: Envelope }).envelope;
        const sent = await ctx.mkt(['trigger', event, ...args, '--json']);
        expect(sent.code, `${what}: ${sent.stderr}`).toBe(0);
        const id = (JSON.parse(sent.stdout) as { delivery_id: string }).delivery_id;
        await server.waitFor(1);
        const seen = server.seen.find((s) => s.headers['x-marketplace-delivery'] === id);
        expect(seen, what).toBeDefined();
        const received = JSON.parse(seen!.body) as Envelope;
        if (event === 'subscription.cancelled') {
          const [a, b] = [shown, received].map((e) => Date.parse(String(e.data.cancelled_at)));
          expect(Math.abs(a! - b!), what).toBeLessThan(60_000);
          expect(a! - Date.now(), what).toBeGreaterThan(300 * 86_400_000);
        }
        const newUser = event === 'subscription.created' && args.length === 0;
        // Key order too: the dry run prints the bytes a handler parses.
        expect(JSON.stringify(byNature(shown, newUser)), what).toBe(
          JSON.stringify(byNature(received, newUser)),
        );
        expect(received.data.user_id, what).toMatch(/^usr_/);
      }
    } finally {
      await ctx.mkt(['apps', 'update', '--webhook-url', '']);
      await server.close();
    }
  });
});

interface Envelope {
  event: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** An envelope without what differs by nature between two sends (see above). */
function byNature(e: Envelope, newUser: boolean): unknown {
  const { cancelled_at: _at, user_id, ...data } = e.data;
  return {
    event: e.event,
    data: {
      ...(newUser ? {} : { user_id }),
      ...data,
      ...('cancelled_at' in e.data ? { cancelled_at: 'T' } : {}),
    },
  };
}

describe('trigger and listen tell the truth', () => {
  it("a delivery the relay took is reported as sent, apart from the app's webhook URL that failed", async () => {
    const refusing = await startServer((_req, res) => json(res, 503, { error: 'down' }));
    const listen = startMkt(['webhooks', 'listen', '--json'], ctx.dir, { env: ctx.env });
    try {
      expect((await ctx.mkt(['apps', 'update', '--webhook-url', `${refusing.url}/hooks`])).code).toBe(0);
      await listen.waitFor((lines) => lines.some((l) => l.type === 'ready'));
      const sent = await ctx.mkt(['trigger', 'user.authorized', '--user', userNamed('Ada')]);
      expect(sent.code, sent.stderr).toBe(0);
      const id = sent.stdout.trim();
      await listen.waitFor((lines) => lines.some((l) => l.id === id && l.type === 'verified'));
      expect(sent.stderr).toContain(
        `✓ Sent user.authorized (${id}) to 1 relay listener (mkt webhooks listen).`,
      );
      expect(sent.stderr).toContain(
        `! The app's webhook URL ${refusing.url}/hooks did not take it (HTTP 503); the marketplace retries it there.`,
      );
    } finally {
      listen.child.kill('SIGINT');
      await listen.exit();
      await ctx.mkt(['apps', 'update', '--webhook-url', '']);
      await refusing.close();
    }
  });

  it('listen says where it receives, resuming, before anything about the relay; the receiver is always open', async () => {
    const second = startMkt(['webhooks', 'listen'], ctx.dir, { env: ctx.env });
    try {
      await second.waitForStderr(/Ready\./);
    } finally {
      second.child.kill('SIGINT');
      await second.exit();
    }
    const stderr = second.stderr();
    // The run before this one left a position: this one resumes after it.
    expect(stderr).toMatch(
      /^Receiving on the relay stream of app_\w+ \(resuming after #\d+\) and http:\/\/127\.0\.0\.1:\d+/m,
    );
    expect(stderr.indexOf('Relay connected')).toBe(-1);
    // What the webhooks guide says of it.
    expect(WEBHOOKS_GUIDE).not.toMatch(/with\s+`--port`, on a local receiver/);
    expect(WEBHOOKS_GUIDE).toMatch(
      /local receiver at `127\.0\.0\.1` for a marketplace that can post to you \(any free port/,
    );
  });
});

describe("the sandbox guide's storage paragraph", () => {
  it('names the files a started sandbox keeps, and they are what it says', async () => {
    const start = SANDBOX_GUIDE.indexOf('\nDurable: ');
    const paragraph = SANDBOX_GUIDE.slice(start, SANDBOX_GUIDE.indexOf('\n\n', start + 1));
    expect(paragraph).toContain('node:sqlite');
    const files = [...paragraph.matchAll(/`([\w-]+\.[\w.-]+)`/g)].map((m) => m[1]!);
    expect(files).toEqual(expect.arrayContaining(['sandbox.sqlite']));
    const data = await tempDir('mkt-storage-');
    const sandbox = await startTestSandbox({ dataDir: data.path });
    try {
      // A change, so that the write-ahead log holds something.
      const r = await fetch(`${sandbox.siteUrl}/api/v1/whoami`, {
        headers: { 'x-api-key': sandbox.seed.test_key },
      });
      expect(r.status).toBe(200);
      for (const file of files) expect(existsSync(join(data.path, file)), file).toBe(true);
      expect(readFileSync(join(data.path, 'sandbox.sqlite')).subarray(0, 16).toString()).toBe(
        'SQLite format 3\0',
      );
    } finally {
      await sandbox.close();
      await data.remove();
    }
  });
});

describe('output that cannot be written is an error', () => {
  /** Runs `mkt ARGS` in bash with `redirect` applied to its stdout; answers its exit code and stderr. */
  function shell(args: string[], redirect: string): Promise<{ code: number; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(
        'bash',
        [
          '-c',
          `set -o pipefail; "$@" ${redirect}; echo "exit=\${PIPESTATUS[0]}" >&2`,
          'bash',
          process.execPath,
          MKT_BIN,
          ...args,
        ],
        { env: { ...baseEnv(ctx.dir), ...ctx.env } },
      );
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('close', () => {
        const code = Number(/exit=(\d+)\n$/.exec(stderr)?.[1]);
        resolve({ code, stderr: stderr.replace(/exit=\d+\n$/, '') });
      });
    });
  }

  it('a full disk and a reader that closed the pipe exit 1', async () => {
    const full = await shell(['plans', 'list', '--json'], '> /dev/full');
    expect(full).toEqual({
      code: 1,
      stderr: 'Error: mkt could not write its output: ENOSPC: no space left on device.\n',
    });
    const version = await shell(['--version'], '> /dev/full');
    expect(version.code).toBe(1);
    const closed = await shell(['entitlements', '--user', userNamed('Ada'), '--json'], '| (exec 0<&-)');
    expect(closed.code).toBe(1);
  });
});
