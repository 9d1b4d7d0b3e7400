import { verify } from '@octokit/webhooks-methods';
import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMkt } from '../support/cli.js';
import { startServer } from '../support/server.js';
import { post, sign, spawnListen, trigger } from './helpers.js';
import { useListenContext } from './listen-context.js';

// mkt webhooks listen, part 1: relay deliveries, the target down, resuming, refusals (the setup: listen-context.ts).
const t = useListenContext();
const { fx, env, app, listen, ready, forwardedIds, accepted } = t;

describe('mkt webhooks listen', () => {
  it('forwards relay deliveries with the exact bytes and headers, verifiable by an independent implementation', async () => {
    const l = listen();
    await ready(l);
    const sent = await trigger(t.sandbox.siteUrl, t.sandbox.seed.test_key, app(), 'subscription.created');
    await l.waitFor(() => forwardedIds(l).includes(sent.delivery_id));
    expect(fx.target.received).toHaveLength(1);
    const got = fx.target.received[0]!;
    expect(got.headers['x-marketplace-delivery']).toBe(sent.delivery_id);
    expect(got.headers['x-marketplace-event']).toBe('subscription.created');
    expect(got.headers['x-mkt-forwarded-by']).toMatch(/^mkt\//);
    expect(
      await verify(
        t.sandbox.seed.app.webhook_secret,
        got.body,
        String(got.headers['x-marketplace-signature']),
      ),
    ).toBe(true);
    const line = l.lines.find((x) => x.type === 'forwarded')!;
    expect(line).toMatchObject({
      event: 'subscription.created',
      signature: 'valid',
      response_status: 200,
      source: 'relay',
    });
    // The journal holds the delivery and never the signing secret.
    const journal = await readFile(join(fx.dir, 'data', 'webhooks', app(), 'journal-1.jsonl'), 'utf8');
    expect(journal).toContain(sent.delivery_id);
    expect(journal).not.toContain(t.sandbox.seed.app.webhook_secret);
    l.child.kill('SIGINT');
    expect(await l.exit()).toEqual({ code: 130, signal: null });
  });

  it('keeps deliveries while the forward target is down and delivers each exactly once when it is back', async () => {
    const l = listen();
    await ready(l);
    fx.target.setDown(true);
    const ids: string[] = [];
    for (const event of ['subscription.created', 'user.authorized', 'subscription.cancelled']) {
      ids.push((await trigger(t.sandbox.siteUrl, t.sandbox.seed.test_key, app(), event)).delivery_id);
    }
    // Wait until the target has refused several attempts, then bring it back.
    await new Promise<void>((resolve) => {
      const t = setInterval(() => fx.target.received.length >= 4 && (clearInterval(t), resolve()), 10);
    });
    expect(accepted()).toEqual([]);
    fx.target.setDown(false);
    await l.waitFor(() => ids.every((id) => forwardedIds(l).includes(id)));
    expect(accepted().sort()).toEqual([...ids].sort());
    const retried = l.lines.filter((x) => x.type === 'forwarded' && Number(x.attempts) > 1);
    expect(retried.length).toBeGreaterThan(0);
  });

  it('resumes after being killed: deliveries sent meanwhile arrive, none twice', async () => {
    let l = listen();
    await ready(l);
    const before = [
      (await trigger(t.sandbox.siteUrl, t.sandbox.seed.test_key, app(), 'subscription.created')).delivery_id,
    ];
    await l.waitFor(() => forwardedIds(l).includes(before[0]!));
    l.child.kill('SIGKILL');
    await l.exit();
    const during: string[] = [];
    for (let i = 0; i < 3; i++) {
      during.push(
        (await trigger(t.sandbox.siteUrl, t.sandbox.seed.test_key, app(), 'user.revoked')).delivery_id,
      );
    }
    l = listen();
    await l.waitFor(() => during.every((id) => forwardedIds(l).includes(id)));
    const after = (await trigger(t.sandbox.siteUrl, t.sandbox.seed.test_key, app(), 'subscription.cancelled'))
      .delivery_id;
    await l.waitFor(() => forwardedIds(l).includes(after));
    expect(l.lines.find((x) => x.type === 'ready')).toMatchObject({ resume_after: expect.any(Number) });
    expect(accepted()).toEqual([...before, ...during, after]);
  });

  it('a first run that received nothing still resumes: what was sent while it was down is forwarded once', async () => {
    let l = listen();
    await ready(l);
    // The relay told the first run its position; the journal keeps it although no delivery came.
    expect(l.lines.find((x) => x.type === 'ready')).toMatchObject({ resume_after: null, position: 0 });
    l.child.kill('SIGINT');
    expect(await l.exit()).toEqual({ code: 130, signal: null });
    const during: string[] = [];
    for (const event of ['subscription.created', 'user.authorized', 'subscription.cancelled']) {
      during.push((await trigger(t.sandbox.siteUrl, t.sandbox.seed.test_key, app(), event)).delivery_id);
    }
    l = listen();
    await l.waitFor(() => during.every((id) => forwardedIds(l).includes(id)));
    expect(l.lines.find((x) => x.type === 'ready')).toMatchObject({ resume_after: 0 });
    const after = (await trigger(t.sandbox.siteUrl, t.sandbox.seed.test_key, app(), 'user.revoked'))
      .delivery_id;
    await l.waitFor(() => forwardedIds(l).includes(after));
    expect(accepted()).toEqual([...during, after]);
    expect(l.lines.filter((x) => x.type === 'filtered')).toEqual([]);
    // Killed without a chance to flush, and started again: nothing twice, nothing lost.
    l.child.kill('SIGKILL');
    await l.exit();
    const later = (await trigger(t.sandbox.siteUrl, t.sandbox.seed.test_key, app(), 'subscription.created'))
      .delivery_id;
    l = listen();
    await l.waitFor(() => forwardedIds(l).includes(later));
    expect(accepted()).toEqual([...during, after, later]);
  });

  it('a fresh listen does not forward the history of the app', async () => {
    const old: string[] = [];
    for (let i = 0; i < 3; i++) {
      old.push(
        (await trigger(t.sandbox.siteUrl, t.sandbox.seed.test_key, app(), 'user.authorized')).delivery_id,
      );
    }
    const l = listen();
    await ready(l);
    expect(l.lines.find((x) => x.type === 'ready')).toMatchObject({ resume_after: null, position: 3 });
    const fresh = (await trigger(t.sandbox.siteUrl, t.sandbox.seed.test_key, app(), 'subscription.created'))
      .delivery_id;
    await l.waitFor(() => forwardedIds(l).includes(fresh));
    expect(accepted()).toEqual([fresh]);
    l.child.kill('SIGINT');
    await l.exit();
    // The sandbox sent no history at all: the journal knows only the new delivery.
    const list = await runMkt(['webhooks', 'deliveries', '--app', app(), '--json'], fx.dir, { env: env() });
    expect(JSON.parse(list.stdout).map((d: { id: string }) => d.id)).toEqual([fresh]);
  });

  it('tolerates a relay that replays its whole history without Last-Event-ID (no position event)', async () => {
    const secret = 'whsec_old_server';
    const frame = (seq: number, ageMs: number) => {
      const body = JSON.stringify({
        event: 'user.authorized',
        timestamp: new Date(Date.now() - ageMs).toISOString(),
        data: { user_id: `usr_${seq}` },
      });
      const headers = {
        'content-type': 'application/json',
        'x-marketplace-signature': sign(secret, body),
        'x-marketplace-delivery': `dlv_old${seq}`,
        'x-marketplace-event': 'user.authorized',
      };
      return `id: ${seq}\nevent: delivery\ndata: ${JSON.stringify({ delivery_id: `dlv_old${seq}`, headers, body })}\n\n`;
    };
    const asked: Array<string | undefined> = [];
    const streams: ServerResponse[] = [];
    const server = await startServer((req, res) => {
      const last = req.headers['last-event-id'] as string | undefined;
      asked.push(last);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': hello\n\n');
      if (last === undefined) res.write(frame(1, 3_600_000) + frame(2, 3_600_000));
      streams.push(res);
    });
    try {
      const site = server.url;
      const run = () => {
        const l = spawnListen(
          ['--app', 'app_old', '--forward-to', fx.target.url, '--forward-backoff', '50'],
          fx.dir,
          { MKT_SITE_URL: site, MKT_API_KEY: 'test_old', MKT_WEBHOOK_SECRET: secret },
        );
        fx.running.push(l);
        return l;
      };
      let l = run();
      await ready(l);
      await l.waitFor((lines) => lines.filter((x) => x.type === 'filtered').length === 2);
      expect(l.lines.filter((x) => x.type === 'filtered').map((x) => [x.id, x.reason])).toEqual([
        ['dlv_old1', 'history'],
        ['dlv_old2', 'history'],
      ]);
      streams.at(-1)!.write(frame(3, 0));
      await l.waitFor(() => forwardedIds(l).includes('dlv_old3'));
      l.child.kill('SIGINT');
      await l.exit();
      l = run();
      await ready(l);
      expect(asked).toEqual([undefined, '3']);
      expect(accepted()).toEqual(['dlv_old3']);
    } finally {
      for (const r of streams) r.destroy();
      await server.close();
    }
  });

  it('refuses forged, stale and malformed deliveries on the local receiver, records them and forwards none', async () => {
    const l = listen(['--no-relay']);
    await ready(l);
    const receiver = String(l.lines.find((x) => x.type === 'ready')!.receiver);
    expect(receiver).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const secret = t.sandbox.seed.app.webhook_secret;
    const fresh = JSON.stringify({
      event: 'subscription.created',
      timestamp: new Date().toISOString(),
      data: { user_id: 'usr_1', plan: 'pro' },
    });
    const stale = JSON.stringify({
      event: 'subscription.created',
      timestamp: new Date(Date.now() - 600_000).toISOString(),
      data: {},
    });
    const forged = await post(`${receiver}hooks`, fresh, {
      'x-marketplace-signature': sign('whsec_wrong', fresh),
      'x-marketplace-delivery': 'dlv_forged',
    });
    const old = await post(receiver, stale, {
      'x-marketplace-signature': sign(secret, stale),
      'x-marketplace-delivery': 'dlv_stale',
    });
    const broken = await post(receiver, '{"event":', {
      'x-marketplace-signature': sign(secret, '{"event":'),
      'x-marketplace-delivery': 'dlv_broken',
    });
    const unsigned = await post(receiver, fresh, { 'x-marketplace-delivery': 'dlv_unsigned' });
    expect([forged.status, old.status, broken.status, unsigned.status]).toEqual([401, 400, 400, 401]);
    expect(JSON.parse(old.body).error.code).toBe('stale_timestamp');
    const good = await post(receiver, fresh, {
      'x-marketplace-signature': sign(secret, fresh),
      'x-marketplace-delivery': 'dlv_good',
    });
    expect(good.status).toBe(202);
    await l.waitFor(() => forwardedIds(l).includes('dlv_good'));
    expect(accepted()).toEqual(['dlv_good']);
    expect(fx.target.received[0]!.body).toBe(fresh);
    const refused = l.lines.filter((x) => x.type === 'refused').map((x) => [x.id, x.reason]);
    expect(refused).toEqual([
      ['dlv_forged', 'bad_signature'],
      ['dlv_stale', 'stale_timestamp'],
      ['dlv_broken', 'malformed_json'],
      ['dlv_unsigned', 'missing_signature'],
    ]);
    l.child.kill('SIGTERM');
    await l.exit();
    const list = await runMkt(
      ['webhooks', 'deliveries', '--app', app(), '--status', 'refused', '--json'],
      fx.dir,
      { env: env() },
    );
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).map((d: { id: string; reason: string }) => d.reason)).toEqual([
      'bad_signature',
      'stale_timestamp',
      'malformed_json',
      'missing_signature',
    ]);
  });
});
