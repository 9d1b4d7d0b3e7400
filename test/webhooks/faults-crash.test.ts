// Faults `mkt webhooks listen` must survive, injected for real (the others: faults.test.ts): a full
// tmpfs, `kill -9` in a burst, and a relay that never ends its line.
import { execFileSync } from 'node:child_process';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMkt } from '../support/cli.js';
import { freePort, startServer } from '../support/server.js';
import { post, spawnListen } from './helpers.js';
import { SECRET, sleep, useFaultsContext } from './faults-context.js';

const { fx, local, envelope, delivery, forwardedIds, accepted } = useFaultsContext();

describe('webhooks listen under faults', () => {
  it.runIf(process.platform === 'linux' && process.getuid?.() === 0)(
    'a full journal disk: 503 and nothing remembered; the sender’s retry is journaled and forwarded once space returns',
    async () => {
      const data = join(fx.dir, 'data');
      await mkdir(data, { recursive: true });
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', data]);
      try {
        const l = await local();
        const first = delivery();
        expect((await post(l.url, first.body, first.headers)).status).toBe(202);
        // Fill the disk to the last byte.
        const filler = join(data, 'filler');
        const h = await open(filler, 'w');
        try {
          for (;;) await h.write(Buffer.alloc(4096, 1));
        } catch (err) {
          expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
        }
        for (let i = 0; i < 64; i++) await h.write(Buffer.alloc(1, 1)).catch(() => undefined);
        await h.close();
        // Posted one after the other: the first may still fit in the journal's last page.
        const sent = Array.from({ length: 20 }, () => delivery());
        const statuses: number[] = [];
        for (const d of sent) statuses.push((await post(l.url, d.body, d.headers)).status);
        expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(15);
        expect(statuses.every((s) => s === 503 || s === 202)).toBe(true);
        await rm(filler);
        // The marketplace retries with the same ids and bytes.
        const retried = await Promise.all(
          sent.map(async (d, i) =>
            statuses[i] === 503 ? (await post(l.url, d.body, d.headers)).status : 202,
          ),
        );
        expect(retried).toEqual(sent.map(() => 202));
        await l.waitFor(() => sent.every((d) => forwardedIds(l).includes(d.id)));
        expect(accepted().sort()).toEqual([first, ...sent].map((d) => d.id).sort());
        l.child.kill('SIGINT');
        await l.exit();
        // Every record is readable after a restart: a torn line never swallowed the next one.
        const list = await runMkt(['webhooks', 'deliveries', '--json', '--limit', '100'], fx.dir);
        const rows = JSON.parse(list.stdout) as Array<{ id: string; status: string }>;
        expect(
          rows
            .filter((r) => r.status === 'forwarded')
            .map((r) => r.id)
            .sort(),
        ).toEqual([first, ...sent].map((d) => d.id).sort());
      } finally {
        execFileSync('umount', ['-l', data]);
      }
    },
  );

  it('kill -9 three times during a burst of 300 with --concurrency 8: nothing lost, at most 8 duplicates per crash, each the same delivery', async () => {
    const port = await freePort();
    const start = () => local(['--port', String(port), '--concurrency', '8']);
    let l = await start();
    // Bodies of 16 KiB and 32 senders keep the journal busy: an outcome waits for its group commit.
    const sent = Array.from({ length: 300 }, () => delivery(envelope({ pad: 'x'.repeat(16_384) })));
    const answered = new Set<string>();
    // The sender retries what it got no answer for (listen was down), with the same ids and bytes.
    const sender = (async () => {
      while (answered.size < sent.length) {
        let next = 0;
        await Promise.all(
          Array.from({ length: 32 }, async () => {
            while (next < sent.length) {
              const d = sent[next++]!;
              if (answered.has(d.id)) continue;
              const res = await post(`http://127.0.0.1:${port}/`, d.body, d.headers).catch(() => null);
              if (res && res.status < 300) answered.add(d.id);
              else await sleep(20);
            }
          }),
        );
      }
    })();
    const crashes: Array<{ mark: number; before: Set<string> }> = [];
    for (const at of [60, 140, 220]) {
      while (fx.target.received.length < at) await sleep(2);
      l.child.kill('SIGKILL');
      await l.exit();
      crashes.push({ mark: fx.target.received.length, before: new Set(accepted()) });
      l = await start();
    }
    await sender;
    await l.waitFor(() => new Set(accepted()).size === sent.length, 30_000);
    await sleep(200);
    const ids = accepted();
    expect(new Set(ids)).toEqual(new Set(sent.map((d) => d.id)));
    // A duplicate is a delivery forwarded before a crash whose outcome was not yet on disk.
    crashes.forEach(({ mark, before }, k) => {
      const after = fx.target.received.slice(mark, crashes[k + 1]?.mark);
      const again = after.filter((r) => before.has(String(r.headers['x-marketplace-delivery'])));
      expect(again.length).toBeLessThanOrEqual(8);
    });
    expect(ids.length - sent.length).toBeLessThanOrEqual(3 * 8);
    // Each duplicate is the same delivery: same id, same bytes.
    const byId = new Map(sent.map((d) => [d.id, d.body]));
    const differ = fx.target.received.filter(
      (r) => !r.raw.equals(byId.get(String(r.headers['x-marketplace-delivery']))!),
    );
    expect(differ).toEqual([]);
  });

  it('a relay that streams one endless data: line is dropped at the limit with a clear message, memory bounded', async () => {
    let connections = 0;
    let streamed = 0;
    const chunk = Buffer.alloc(256 * 1024, 'x');
    const relay = await startServer((req, res) => {
      connections += 1;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': hello\n\ndata: ');
      const pump = () => {
        for (let more = true; more && !res.destroyed; streamed += chunk.length) more = res.write(chunk);
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    const site = relay.url;
    try {
      const l = spawnListen(['--app', 'app_endless', '--relay'], fx.dir, {
        MKT_SITE_URL: site,
        MKT_API_KEY: 'test_endless',
        MKT_WEBHOOK_SECRET: SECRET,
      });
      fx.running.push(l);
      await l.waitForStderr((e) => (e.match(/longer than 8 MiB/g) ?? []).length >= 3, 30_000);
      const rss =
        Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${l.child.pid}/status`, 'utf8'))![1]) / 1024;
      expect(rss).toBeLessThan(200);
      expect(connections).toBeGreaterThanOrEqual(3);
      expect(streamed).toBeGreaterThan(24 * 1024 * 1024);
      expect(l.stderr()).toContain('"type":"reconnecting"');
    } finally {
      await relay.close();
    }
  });
});
