// Each fault `mkt webhooks listen` must survive (issue "keeps its promise under faults"), injected
// for real: a stopped target, forged and replayed requests, raw bytes, a rotated secret; a full
// tmpfs, `kill -9` in a burst and a relay that never ends its line in faults-crash.test.ts.
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { runMkt } from '../support/cli.js';
import { startServer } from '../support/server.js';
import { post, sign, spawnListen } from './helpers.js';
import { SECRET, sleep, useFaultsContext } from './faults-context.js';

const { fx, local, envelope, headersFor, delivery, forwardedIds, accepted } = useFaultsContext();

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
});
