// Each fault `mkt webhooks listen` must survive (issue "keeps its promise under faults"), injected
// for real: a stopped target, a full tmpfs, forged and replayed requests, raw bytes, a rotated
// secret, `kill -9` in a burst, and a relay that never ends its line.
import { execFileSync } from 'node:child_process';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMkt } from '../support/cli.js';
import { freePort, startServer } from '../support/server.js';
import { post, sign, spawnListen, type ListenProcess, useListenFixture } from './helpers.js';

const SECRET = 'whsec_faults';
const fx = useListenFixture();

/** `listen --no-relay` with its local receiver, forwarding to the target; resolves when ready. */
async function local(
  extra: string[] = [],
  env: Record<string, string> = {},
): Promise<ListenProcess & { url: string }> {
  const l = spawnListen(
    ['--no-relay', '--forward-to', fx.target.url, '--forward-backoff', '50', ...extra],
    fx.dir,
    { MKT_WEBHOOK_SECRET: SECRET, ...env },
  );
  fx.running.push(l);
  await l.waitFor((lines) => lines.some((x) => x.type === 'ready'));
  return Object.assign(l, { url: String(l.lines.find((x) => x.type === 'ready')!.receiver) });
}

let counter = 0;
/** A signed-to-be envelope with a unique body. */
const envelope = (data: object = {}) =>
  Buffer.from(
    JSON.stringify({
      event: 'user.authorized',
      timestamp: new Date().toISOString(),
      data: { n: ++counter, ...data },
    }),
  );
/** A fresh signed delivery: its id, body and headers. */
function delivery(body?: Buffer): { id: string; body: Buffer; headers: Record<string, string> } {
  const id = `dlv_fault${process.pid}_${++counter}`;
  const bytes = body ?? envelope();
  return { id, body: bytes, headers: headersFor(id, bytes) };
}
const headersFor = (id: string, body: Buffer, secret = SECRET) => ({
  'x-marketplace-signature': sign(secret, body),
  'x-marketplace-delivery': id,
  'x-marketplace-event': 'user.authorized',
});
const forwardedIds = (l: ListenProcess) => l.lines.filter((x) => x.type === 'forwarded').map((x) => x.id);
const accepted = () =>
  fx.target.received
    .filter((r) => r.answered === 200)
    .map((r) => String(r.headers['x-marketplace-delivery']));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('webhooks listen under faults', () => {
  it('waits for a target that is down (stopped) instead of giving up, and delivers each once when it is back', async () => {
    const l = await local();
    await fx.target.stop();
    const sent = Array.from({ length: 10 }, () => delivery());
    for (const d of sent) expect((await post(l.url, d.body, d.headers)).status).toBe(202);
    // Down long past the five tries listen used to give up after.
    await l.waitForStderr((e) => (e.match(/"type":"target_down"/g) ?? []).length >= 6, 20_000);
    await fx.target.start();
    await l.waitFor(() => sent.every((d) => forwardedIds(l).includes(d.id)), 20_000);
    expect(accepted().sort()).toEqual(sent.map((d) => d.id).sort());
    expect(l.lines.filter((x) => x.type === 'forward_failed')).toEqual([]);
    // Only one delivery probed the target while it was down: the others waited.
    const probes = new Set([...l.stderr().matchAll(/"type":"target_down","id":"([^"]+)"/g)].map((m) => m[1]));
    expect(probes.size).toBe(1);
  });

  it('a 4xx from the target marks the delivery failed and says how to resend it; resend --status failed re-drives all', async () => {
    fx.target.answer(() => 422);
    const l = await local();
    const sent = [delivery(), delivery()];
    for (const d of sent) await post(l.url, d.body, d.headers);
    await l.waitFor((lines) => lines.filter((x) => x.type === 'forward_failed').length === 2);
    expect(l.lines.find((x) => x.type === 'forward_failed')).toMatchObject({
      response_status: 422,
      resend: `mkt webhooks resend ${sent[0]!.id}`,
    });
    l.child.kill('SIGINT');
    await l.exit();
    fx.target.answer(() => 200);
    const again = await runMkt(['webhooks', 'resend', '--status', 'failed', '--json'], fx.dir);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).map((r: { id: string }) => r.id)).toEqual(sent.map((d) => d.id));
    expect(accepted()).toEqual(sent.map((d) => d.id));
  });

  it('a --forward-to URL with credentials reaches the target as HTTP Basic in place of the delivery’s own (also on resend), each header once, and is never printed with its password', async () => {
    const target = new URL(fx.target.url);
    target.username = 'dev';
    target.password = 'p@ss:word';
    const l = spawnListen(['--no-relay', '--forward-to', target.href], fx.dir, {
      MKT_WEBHOOK_SECRET: SECRET,
    });
    fx.running.push(l);
    await l.waitFor((lines) => lines.some((x) => x.type === 'ready'));
    const d = delivery();
    const headers = { ...d.headers, authorization: 'Bearer sender-token', 'x-custom': 'kept' };
    await post(String(l.lines.find((x) => x.type === 'ready')!.receiver), d.body, headers);
    await l.waitFor(() => forwardedIds(l).includes(d.id));
    l.child.kill('SIGINT');
    await l.exit();
    const resent = await runMkt(['webhooks', 'resend', d.id, '--json'], fx.dir);
    expect(resent.code).toBe(0);
    const basic = `Basic ${Buffer.from('dev:p@ss:word').toString('base64')}`;
    const got = fx.target.received.filter((r) => r.headers['x-marketplace-delivery'] === d.id);
    expect(got.map((r) => r.headers.authorization)).toEqual([basic, basic]);
    for (const r of got) {
      const names = r.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
      expect(names.length).toBe(new Set(names).size);
      expect(r.headers['x-custom']).toBe('kept');
    }
    expect(Buffer.compare(got[0]!.raw, d.body)).toBe(0);
    const listed = await runMkt(['webhooks', 'deliveries', '--json'], fx.dir);
    const printed = [JSON.stringify(l.lines), l.stderr(), resent.stdout, listed.stdout].join('\n');
    expect(printed).toContain(`http://dev:***@127.0.0.1:${target.port}/webhooks`);
    expect(printed).not.toContain(target.password);
    expect(printed).not.toContain('p@ss:word');
  });

  it('a sender faster than the target waits at the high-water mark instead of queueing without bound', async () => {
    const held: Array<() => void> = [];
    const slow = await startServer((_req, res) => held.push(() => res.writeHead(200).end()));
    try {
      // One forward slot: the mark is 32 deliveries waiting (one being forwarded, 31 queued).
      const l = spawnListen(
        ['--no-relay', '--forward-to', `${slow.url}/hook`, '--concurrency', '1'],
        fx.dir,
        {
          MKT_WEBHOOK_SECRET: SECRET,
        },
      );
      fx.running.push(l);
      await l.waitFor((lines) => lines.some((x) => x.type === 'ready'));
      const url = String(l.lines.find((x) => x.type === 'ready')!.receiver);
      const first = Array.from({ length: 32 }, () => delivery());
      for (const d of first) expect((await post(url, d.body, d.headers)).status).toBe(202);
      const last = delivery();
      let answered = false;
      const pending = post(url, last.body, last.headers).finally(() => (answered = true));
      await sleep(300);
      expect(answered).toBe(false);
      // The target answers again: the backlog goes down and the waiting delivery is taken.
      const release = setInterval(() => held.splice(0).forEach((answer) => answer()), 10);
      try {
        expect((await pending).status).toBe(202);
        await l.waitFor(() => [...first, last].every((d) => forwardedIds(l).includes(d.id)), 20_000);
      } finally {
        clearInterval(release);
      }
      expect(new Set(slow.seen.map((r) => r.headers['x-marketplace-delivery'])).size).toBe(33);
    } finally {
      await slow.close();
    }
  });

  it('start-up says where it receives, where it forwards and what waits from an earlier run, then Ready once; a failed forward ends with the resend command', async () => {
    const l = await local();
    await fx.target.stop();
    const waiting = [delivery(), delivery()];
    for (const d of waiting) expect((await post(l.url, d.body, d.headers)).status).toBe(202);
    await l.waitForStderr((e) => e.includes('"type":"target_down"'));
    l.child.kill('SIGKILL');
    await l.exit();
    await fx.target.start();
    fx.target.answer((r) => (r.headers['x-marketplace-delivery'] === waiting[1]!.id ? 422 : 200));
    const h = spawnListen(
      ['--no-relay', '--forward-to', fx.target.url],
      fx.dir,
      { MKT_WEBHOOK_SECRET: SECRET },
      { json: false },
    );
    fx.running.push(h);
    const failedLine = (x: Record<string, unknown>) => String(x.text).includes(waiting[1]!.id);
    await h.waitFor((lines) => lines.some(failedLine));
    expect(String(h.lines.find(failedLine)!.text)).toMatch(
      new RegExp(`422.*mkt webhooks resend ${waiting[1]!.id}$`),
    );
    const stderr = h.stderr().split('\n');
    const at = (re: RegExp) => stderr.findIndex((x) => re.test(x));
    const order = [
      at(/^Receiving on http:\/\/127\.0\.0\.1:\d+\/$/),
      at(new RegExp(`^Forwarding to ${fx.target.url}$`)),
      at(
        new RegExp(`^2 deliveries from an earlier run are waiting; forwarded first, to ${fx.target.url}\\.$`),
      ),
      at(/Ready\./),
    ];
    expect(order.every((n, k) => n >= 0 && (k === 0 || n > order[k - 1]!))).toBe(true);
    expect(stderr.filter((x) => x.includes('Ready')).length).toBe(1);
  });

  it('the local receiver answers 421 to a request naming a foreign Host (DNS rebinding) and takes nothing', async () => {
    const l = await local();
    const d = delivery();
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        l.url,
        { method: 'POST', headers: { ...d.headers, host: 'evil.example' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(d.body);
    });
    expect(status).toBe(421);
    expect((await post(l.url, d.body, d.headers)).status).toBe(202);
    await l.waitFor(() => forwardedIds(l).includes(d.id));
    expect(accepted()).toEqual([d.id]);
  });

  it('a forged request carrying a genuine id does not make the genuine delivery a duplicate', async () => {
    const l = await local();
    const genuine = delivery();
    const forged = await post(l.url, Buffer.from('{"event":"user.authorized","forged":true}'), {
      ...genuine.headers,
      'x-marketplace-signature': sign('whsec_attacker', 'x'),
    });
    expect(forged.status).toBe(401);
    expect((await post(l.url, genuine.body, genuine.headers)).status).toBe(202);
    await l.waitFor(() => forwardedIds(l).includes(genuine.id));
    expect(fx.target.received.map((r) => r.raw)).toEqual([genuine.body]);
  });

  it('a body that is not UTF-8, signed over its raw bytes, verifies and arrives byte for byte (also on resend)', async () => {
    const raw = Buffer.concat([
      Buffer.from(`{"event":"user.authorized","timestamp":"${new Date().toISOString()}","data":{"name":"`),
      Buffer.from([0xe9, 0xff, 0xfe, 0xc3]),
      Buffer.from('"}}'),
    ]);
    const d = delivery(raw);
    const l = await local();
    expect((await post(l.url, d.body, d.headers)).status).toBe(202);
    await l.waitFor(() => forwardedIds(l).includes(d.id));
    l.child.kill('SIGINT');
    await l.exit();
    const resent = await runMkt(['webhooks', 'resend', d.id], fx.dir);
    expect(resent.code).toBe(0);
    expect(fx.target.received.map((r) => r.raw)).toEqual([raw, raw]);
  });

  it('a forgery that copies a genuine signature does not lift the genuine body’s replay protection', async () => {
    const l = await local();
    const genuine = delivery();
    expect((await post(l.url, genuine.body, genuine.headers)).status).toBe(202);
    const copied = {
      ...headersFor('dlv_forged_copy', envelope()),
      'x-marketplace-signature': genuine.headers['x-marketplace-signature']!,
    };
    expect((await post(l.url, envelope(), copied)).status).toBe(401);
    const replay = await post(l.url, genuine.body, headersFor('dlv_replayed_after_forgery', genuine.body));
    expect(JSON.parse(replay.body)).toMatchObject({ status: 'duplicate' });
    await l.waitFor(() => forwardedIds(l).includes(genuine.id));
    expect(accepted()).toEqual([genuine.id]);
  });

  it('the same signed body re-posted under a new delivery id inside the window is not forwarded again', async () => {
    const l = await local();
    const first = delivery();
    expect((await post(l.url, first.body, first.headers)).status).toBe(202);
    const replay = await post(l.url, first.body, headersFor('dlv_replayed', first.body));
    expect(replay.status).toBe(200);
    expect(JSON.parse(replay.body)).toMatchObject({ status: 'duplicate' });
    const next = delivery();
    await post(l.url, next.body, next.headers);
    await l.waitFor(() => forwardedIds(l).includes(next.id));
    // After a restart, from the journal; the signature's hex in capitals is the same signature.
    l.child.kill('SIGINT');
    await l.exit();
    const again = await local();
    const upper = { ...headersFor('dlv_replayed_2', first.body) };
    upper['x-marketplace-signature'] = `sha256=${upper['x-marketplace-signature'].slice(7).toUpperCase()}`;
    const replay2 = await post(again.url, first.body, upper);
    expect(JSON.parse(replay2.body)).toMatchObject({ status: 'duplicate' });
    expect(accepted()).toEqual([first.id, next.id]);
  });

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
