import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { runMkt, tempDir } from '../support/cli.js';
import { answerWith, startServer } from '../support/server.js';
import { killAllSandboxProcesses, startSandboxProcess } from '../support/sandbox.js';

// Transitions that fall due while the sandbox is stopped happen, in order, at its next start. The
// real clock is moved for real: the second start runs under libfaketime (Debian's `faketime`),
// 40 days later, after a `kill -9` of the first.

const DAY = 86_400_000;
afterEach(() => killAllSandboxProcesses());

/** Debian's libfaketime, wherever the architecture put it. */
function libfaketime(): string {
  const dirs = ['/usr/lib', ...readdirSync('/usr/lib').map((d) => join('/usr/lib', d))];
  const found = dirs.map((d) => join(d, 'faketime', 'libfaketime.so.1')).find((p) => existsSync(p));
  if (!found) throw new Error('libfaketime is missing: apt-get install faketime');
  return found;
}

it('runs what fell due while stopped at the next start: renewals, failed payments, expiries', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'mkt-stopped-'));
  const config = await tempDir();
  const receiver = await startServer(answerWith(200));
  try {
    let p = await startSandboxProcess(dataDir, config.path);
    const env = { MKT_SITE_URL: p.siteUrl, MKT_API_KEY: p.seed.test_key };
    const json = async (args: string[]) => {
      const r = await runMkt([...args, '--json'], config.path, { env });
      if (r.code !== 0) throw new Error(`mkt ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
      return JSON.parse(r.stdout);
    };
    const app = p.seed.app.id;
    const pastDue = p.seed.users.find((u) => u.status === 'past_due')!;
    await json(['apps', 'update', app, '--webhook-url', receiver.url]);
    const create = (payment: string) =>
      json(['simulator', 'users', 'create', '--plan', 'pro-monthly', '--payment', payment]);
    const pays = await create('succeeds');
    const declines = await create('declines_renewals');
    const cancels = await create('succeeds');
    await json(['simulator', 'users', 'cancel', cancels.id]);
    const paysBefore = await json(['entitlements', '--user', pays.id]);
    expect(paysBefore.status).toBe('active');
    await receiver.waitFor(4); // three subscription.created, one subscription.cancelled (requested)
    await p.kill9();

    // 40 days later by the real clock: past the first period end (≈ 30 days) and its 7-day grace.
    p = await startSandboxProcess(dataDir, config.path, {
      env: {
        LD_PRELOAD: libfaketime(),
        FAKETIME: '+40d',
        FAKETIME_DONT_FAKE_MONOTONIC: '1',
      },
    });
    env.MKT_SITE_URL = p.siteUrl;
    const clock = await json(['simulator', 'clock']);
    expect(clock.offset_s).toBe(0); // business time did not move: the real clock did
    expect(Date.parse(clock.now) - Date.now()).toBeGreaterThan(39 * DAY);

    const paysAfter = await json(['entitlements', '--user', pays.id]);
    expect(paysAfter.status).toBe('active');
    expect(Date.parse(paysAfter.expires_at)).toBeGreaterThan(Date.parse(paysBefore.expires_at) + 27 * DAY);
    expect(paysAfter.usage.api_calls).toBe(0);
    expect((await json(['entitlements', '--user', declines.id])).status).toBe('expired');
    expect((await json(['entitlements', '--user', cancels.id])).status).toBe('expired');

    // The charges, in order: a renewal that succeeded; a renewal and three retries declined.
    const payments: Array<{ user_id: string; kind: string; outcome: string }> = await json([
      'apps',
      'payments',
      'list',
      '--app',
      app,
    ]);
    const of = (id: string) =>
      payments.filter((x) => x.user_id === id && x.kind !== 'initial').map((x) => `${x.kind}:${x.outcome}`);
    expect(of(pays.id)).toEqual(['renewal:succeeded']);
    expect(of(declines.id)).toEqual([
      'renewal:declined',
      'retry:declined',
      'retry:declined',
      'retry:declined',
    ]);
    expect(of(cancels.id)).toEqual([]);

    // The one event the table names for these transitions reached the app's webhook, once each,
    // in time order: the seeded past_due user's grace ended first, then the declined renewal's.
    const events = (await receiver.waitFor(6)).map((s) => JSON.parse(s.body));
    expect(events.slice(4).map((e) => [e.event, e.data.user_id, e.data.reason])).toEqual([
      ['subscription.cancelled', pastDue.id, 'payment_failed'],
      ['subscription.cancelled', declines.id, 'payment_failed'],
    ]);
    expect(Date.parse(events[4].data.cancelled_at)).toBeLessThan(Date.parse(events[5].data.cancelled_at));
    await new Promise((r) => setTimeout(r, 1_000)); // time for a duplicate to arrive, were one sent
    expect(receiver.seen.length).toBe(6);
  } finally {
    await receiver.close();
    await rm(dataDir, { recursive: true, force: true });
    await config.remove();
  }
}, 120_000);
