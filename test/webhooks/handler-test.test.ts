// `mkt webhooks test`: a correct handler passes the whole battery; the same handler written wrong in
// one way fails exactly the cases that catch that fault, each with its fix line (issue 52).
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMkt, tempDir } from '../support/cli.js';
import { freePort } from '../support/server.js';
import { startHandler, type Fault, type Handler } from './handler-fixtures.js';

const SECRET = `whsec_${randomBytes(24).toString('base64url')}`;

interface Report {
  target: string;
  secret_source: string;
  passed: number;
  failed: number;
  ok: boolean;
  guide: string;
  cases: Array<{
    id: string;
    expected: string;
    got: string;
    status: number | null;
    ms: number;
    time: string;
    verdict: string;
    fix: string | null;
    answer: string | null;
  }>;
}

const SIGNATURE_CASES = [
  'signature.other_secret',
  'signature.missing',
  'signature.bad_hex',
  'signature.tampered',
  'signature.reserialized',
  'signature.other_body',
];

/** Each fault, the cases that must catch it (and no other), and what their fix line says. */
const FAULTS: Array<{ fault: Fault; fails: string[]; fix: RegExp; args?: string[] }> = [
  { fault: 'signature_unchecked', fails: SIGNATURE_CASES, fix: /signature|hmac|bytes|sha256=/i },
  { fault: 'signature_optional', fails: ['signature.missing'], fix: /without X-Marketplace-Signature/ },
  { fault: 'bad_hex_crashes', fails: ['signature.bad_hex'], fix: /never 5xx.*64 hex digits/ },
  { fault: 'parsed_before_verify', fails: ['signature.reserialized'], fix: /raw bytes before parsing/ },
  { fault: 'timestamp_unchecked', fails: ['timestamp.stale', 'timestamp.future'], fix: /refuse \(4xx\)/ },
  { fault: 'timestamp_past_only', fails: ['timestamp.future'], fix: /either way/ },
  { fault: 'duplicate_refused', fails: ['duplicate'], fix: /seen before is done/ },
  { fault: 'duplicate_500', fails: ['duplicate'], fix: /without doing the work twice/ },
  { fault: 'unknown_event_500', fails: ['event.unknown'], fix: /event you do not handle/ },
  { fault: 'strict_fields', fails: ['event.extra_field'], fix: /fields you do not know/ },
  { fault: 'small_body_limit', fails: ['size.limit'], fix: /up to 1048576 bytes/ },
  { fault: 'out_of_order_500', fails: ['order.cancelled_first'], fix: /out of order/ },
  // Graded against a 2 s timeout: 1.5 s is more than half of it.
  {
    fault: 'slow_revoke',
    fails: ['valid.user.revoked'],
    fix: /answer (at once|within)/,
    args: ['--delivery-timeout', '2'],
  },
];

let dir: Awaited<ReturnType<typeof tempDir>>;
const handlers: Handler[] = [];
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await Promise.all(handlers.splice(0).map((h) => h.close()));
  await dir.remove();
});

const start = async (...args: Parameters<typeof startHandler>) => {
  const h = await startHandler(...args);
  handlers.push(h);
  return h;
};
const mktTest = (args: string[], env: Record<string, string | undefined> = {}) =>
  runMkt(['webhooks', 'test', ...args], dir.path, { env: { MKT_WEBHOOK_SECRET: SECRET, ...env } });

describe('mkt webhooks test', () => {
  it('passes a correct handler on every case, in under 5 s, and exits 0', async () => {
    const h = await start(SECRET);
    const began = performance.now();
    const r = await mktTest(['--forward-to', String(h.port), '--json']);
    const took = performance.now() - began;
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.cases.filter((c) => c.verdict !== 'pass')).toEqual([]);
    expect(report).toMatchObject({
      ok: true,
      failed: 0,
      passed: report.cases.length,
      secret_source: '$MKT_WEBHOOK_SECRET',
    });
    expect(report.cases.map((c) => c.id)).toEqual([
      'valid.user.authorized',
      'valid.subscription.created',
      'valid.subscription.cancelled',
      'valid.user.revoked',
      'duplicate',
      ...SIGNATURE_CASES,
      'timestamp.stale',
      'timestamp.future',
      'event.unknown',
      'event.extra_field',
      'size.limit',
      'order.cancelled_first',
    ]);
    expect(Object.keys(report.cases[0]!).sort()).toEqual(
      ['answer', 'expected', 'fix', 'got', 'id', 'ms', 'status', 'time', 'title', 'verdict'].sort(),
    );
    expect(report.cases.find((c) => c.id === 'order.cancelled_first')!.got).toBe('204, 204');
    // What it accepted: the four events, the out-of-order pair, the unknown event, the extra field, the big one.
    expect(h.accepted.map((e) => e.event)).toEqual([
      'user.authorized',
      'subscription.created',
      'subscription.cancelled',
      'user.revoked',
      'subscription.paused',
      'subscription.created',
      'user.authorized',
      'subscription.cancelled',
      'subscription.created',
    ]);
    // The size case is exactly the limit; the others are deliveries of a few hundred bytes.
    expect(Math.max(...h.sizes)).toBe(1024 * 1024);
    expect(h.sizes.filter((n) => n > 1000)).toHaveLength(1);
    expect(took).toBeLessThan(5_000);
  });

  it.each(FAULTS)(
    'catches $fault with exactly its cases and their fix line (exit 1)',
    async ({ fault, fails, fix, args }) => {
      const h = await start(SECRET, [fault]);
      const r = await mktTest(['--forward-to', `localhost:${h.port}/webhooks`, '--json', ...(args ?? [])]);
      expect(r.code, r.stderr).toBe(1);
      const report = JSON.parse(r.stdout) as Report;
      const failed = report.cases.filter((c) => c.verdict === 'fail');
      expect(failed.map((c) => c.id)).toEqual(fails);
      for (const c of failed) expect(c.fix, c.id).toMatch(fix);
      expect(report).toMatchObject({ ok: false, failed: fails.length });
      expect(r.stderr).toContain(
        `${fails.length} of ${report.cases.length} cases failed (${fails.join(', ')})`,
      );
    },
  );

  it('shows the answers of failed cases escaped and bounded in the table, with the guide', async () => {
    const answer = `\u001b[2J\u001b]52;c;ZXZpbA==\u0007bad\u202esignature ${'x'.repeat(500)}`;
    const h = await start(`whsec_${randomBytes(24).toString('base64url')}`, [], { answer });
    const r = await mktTest(['--forward-to', `http://127.0.0.1:${h.port}/webhooks`]);
    expect(r.code).toBe(1);
    for (const raw of ['\u001b', '\u0007', '\u202e']) expect(r.stdout + r.stderr).not.toContain(raw);
    const row = r.stdout.split('\n').find((l) => l.startsWith('valid.user.authorized'))!;
    expect(row).toContain('401 "\\u001b[2J\\u001b]52;c;ZXZpbA==\\u0007bad\\u202esignature xxx');
    expect(row).not.toContain('x'.repeat(100));
    expect(row).toMatch(/FAIL\tverify over the raw bytes with the app's whsec_… secret/);
    expect(r.stderr).toContain(
      'How to write a handler that passes: docs/webhooks.md, "Your webhook handler".',
    );
  });

  it('refuses a target off this machine without --allow-remote, and says so first with it', async () => {
    const h = await start(SECRET, [], { host: '127.0.0.2' });
    const refused = await mktTest(['--forward-to', `${h.url}/webhooks`]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`--forward-to ${h.url}/webhooks is not on this machine`);
    expect(h.accepted).toEqual([]);
    const allowed = await mktTest(['--forward-to', `${h.url}/webhooks`, '--allow-remote']);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stderr.split('\n')[0]).toMatch(
      /is not on this machine: the battery's deliveries.*go to 127\.0\.0\.2/,
    );
  });

  it('says when nothing answers (exit 6) and when there is no secret (exit 2)', async () => {
    const port = await freePort();
    const down = await mktTest(['--forward-to', String(port), '--wait', '1']);
    expect(down.code).toBe(6);
    expect(down.stderr).toContain(
      `Nothing answers at http://localhost:${port}/ (the connection was refused for 1 s).`,
    );
    const none = await mktTest(['--forward-to', String(port)], { MKT_WEBHOOK_SECRET: undefined });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('No webhook signing secret');
    const unset = await mktTest(['--forward-to', String(port), '--secret-env', 'MY_SECRET']);
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain('The variable MY_SECRET (from --secret-env) is not set or empty.');
  });

  it('waits for a handler that is still starting, then grades it', async () => {
    const port = await freePort();
    const run = mktTest(['--forward-to', String(port), '--json']);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const h = await start(SECRET, [], { port });
    const r = await run;
    expect(r.code, r.stderr).toBe(0);
    expect(h.accepted.length).toBe(9);
  });

  it.each(['--secret-env', '--secret-from-env'])('takes the secret from %s', async (flag) => {
    const h = await start(SECRET);
    const r = await mktTest(['--forward-to', String(h.port), flag, 'MY_SECRET', '--json'], {
      MKT_WEBHOOK_SECRET: 'whsec_not_this_one',
      MY_SECRET: SECRET,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).secret_source).toBe('$MY_SECRET');
  });
});
