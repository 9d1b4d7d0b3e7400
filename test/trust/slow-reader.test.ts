// A hostile marketplace streams as fast as it can to `mkt logs tail` and `mkt webhooks listen --json`
// whose stdout nobody reads (a pipe left paused, as `| less` left open): mkt stops reading the stream
// while its output cannot keep up, so its memory stays bounded by small buffers, not by what was sent.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startMkt, tempDir, type RunningMkt } from '../support/cli.js';
import {
  deliveryFrame,
  firehose,
  positionFrame,
  RELAY_SECRET,
  rssMb,
  startHostileStream,
  type HostileStream,
} from './hostile/streams.js';

/** Sent by the server before memory is measured, unless mkt stopped reading before. */
const SENT_MB = 300;
/**
 * The bound on what mkt's memory grows by from when it is ready: small buffers (it grew by 170 MB
 * and more before; mkt itself is about 100 MB on its own).
 */
const GROWTH_MB = 64;

let dir: { path: string; remove(): Promise<void> };
let server: HostileStream | undefined;
let mkt: RunningMkt | undefined;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  mkt?.child.kill('SIGKILL');
  await server?.close();
  await dir.remove();
});

/**
 * Waits until the server sent SENT_MB, or its writes have been blocked (mkt stopped reading) for 40
 * looks in a row; then the resident memory of mkt.
 */
async function memoryOnceFedOrBlocked(state: { sent: number; blocked: boolean }, pid: number) {
  for (let stuck = 0; state.sent < SENT_MB * 1024 * 1024 && stuck < 40;) {
    await new Promise((r) => setTimeout(r, 100));
    stuck = state.blocked ? stuck + 1 : 0;
  }
  return rssMb(pid);
}

const pad = 'x'.repeat(3000);

describe('a reader that does not keep up', () => {
  it('logs tail: memory bounded by a buffer, not by what the server sent', async () => {
    let feed: ReturnType<typeof firehose> | undefined;
    server = await startHostileStream('/logs/stream', (res) => {
      feed = firehose(res, (i) => {
        const entry = {
          id: `req_${i}`,
          at: new Date(0).toISOString(),
          status: 200,
          method: 'GET',
          path: `/apps/${pad}`,
          latency_ms: 1,
        };
        return `id: ${i}\nevent: request\ndata: ${JSON.stringify(entry)}\n\n`;
      });
    });
    mkt = startMkt(['logs', 'tail', '--app', 'app_slow'], dir.path, {
      env: { MKT_SITE_URL: server.url, MKT_API_KEY: 'test_slow' },
    });
    mkt.child.stdout.pause(); // nobody reads
    await mkt.waitForStderr(/Tailing the request log/);
    const base = await rssMb(mkt.child.pid!);
    while (!feed) await new Promise((r) => setTimeout(r, 20));
    const rss = await memoryOnceFedOrBlocked(feed, mkt.child.pid!);
    feed.stop();
    expect(
      rss - base,
      `${(feed.sent / 1024 / 1024).toFixed(0)} MB sent, RSS ${base} → ${rss} MB`,
    ).toBeLessThan(GROWTH_MB);
    // It did read: the server got rid of more than its socket holds, and of less than it would.
    expect(feed.sent).toBeGreaterThan(1024 * 1024);
  }, 120_000);

  it('listen --json: memory bounded by a buffer, not by what the relay sent', async () => {
    let feed: ReturnType<typeof firehose> | undefined;
    server = await startHostileStream('/webhooks/stream', (res) => {
      res.write(positionFrame(0));
      feed = firehose(res, (i) => {
        const body = JSON.stringify({
          event: 'subscription.created',
          timestamp: new Date().toISOString(),
          data: { i, pad },
        });
        return deliveryFrame(i + 1, `dlv_slow_${i}`, body);
      });
    });
    mkt = startMkt(['webhooks', 'listen', '--json', '--app', 'app_slow'], dir.path, {
      env: { MKT_SITE_URL: server.url, MKT_API_KEY: 'test_slow', MKT_WEBHOOK_SECRET: RELAY_SECRET },
    });
    await mkt.waitFor((lines) => lines.some((x) => x.type === 'ready'));
    mkt.child.stdout.pause(); // nobody reads from now on
    const base = await rssMb(mkt.child.pid!);
    while (!feed) await new Promise((r) => setTimeout(r, 20));
    const rss = await memoryOnceFedOrBlocked(feed, mkt.child.pid!);
    feed.stop();
    expect(
      rss - base,
      `${(feed.sent / 1024 / 1024).toFixed(0)} MB sent, RSS ${base} → ${rss} MB`,
    ).toBeLessThan(GROWTH_MB);
    expect(feed.sent).toBeGreaterThan(1024 * 1024);
  }, 120_000);
});

describe('a request log stream that never ends its line', () => {
  it('is dropped at the limit with a message naming the request log stream, not the relay', async () => {
    const chunk = 'x'.repeat(256 * 1024);
    server = await startHostileStream('/logs/stream', (res) => {
      res.write('data: ');
      firehose(res, () => chunk);
    });
    mkt = startMkt(['logs', 'tail', '--app', 'app_endless'], dir.path, {
      env: { MKT_SITE_URL: server.url, MKT_API_KEY: 'test_endless' },
    });
    await mkt.waitForStderr(/Lost the log stream \(([^)]*)\)/, 60_000);
    expect(mkt.stderr()).toContain(
      'Lost the log stream (the request log stream sent an event longer than 8 MiB)',
    );
    expect(mkt.stderr()).not.toContain('relay');
  }, 90_000);
});
