import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMkt } from '../support/cli.js';
import { startTestSandbox } from '../support/sandbox.js';
import { startServer } from '../support/server.js';
import { post, sign, spawnListen, trigger } from './helpers.js';
import { useListenContext } from './listen-context.js';

// mkt webhooks listen, part 2: bursts, what the handler answered, resend, a restarted sandbox, filters (the setup: listen-context.ts).
const t = useListenContext();
const { fx, env, app, listen, ready, send, forwardedIds, accepted } = t;

describe('mkt webhooks listen', () => {
  it('delivers a burst of 400 deliveries exactly once each, and a retried one only once', async () => {
    const l = listen(['--no-relay']);
    await ready(l);
    const receiver = String(l.lines.find((x) => x.type === 'ready')!.receiver);
    const secret = t.sandbox.seed.app.webhook_secret;
    const ids = Array.from({ length: 400 }, (_, i) => `dlv_burst${i}`);
    const send = (id: string) => {
      const body = JSON.stringify({
        event: 'user.authorized',
        timestamp: new Date().toISOString(),
        data: { user_id: id },
      });
      return post(receiver, body, {
        'x-marketplace-signature': sign(secret, body),
        'x-marketplace-delivery': id,
      });
    };
    for (let i = 0; i < ids.length; i += 50) {
      const answers = await Promise.all(ids.slice(i, i + 50).map(send));
      expect(answers.every((a) => a.status === 202)).toBe(true);
    }
    // The marketplace retrying a delivery it already made is answered 200 and not forwarded again.
    expect((await send('dlv_burst7')).status).toBe(200);
    await l.waitFor(() => forwardedIds(l).length === ids.length, 30_000);
    expect(new Set(accepted()).size).toBe(ids.length);
    expect(accepted()).toHaveLength(ids.length);
  });

  it('records what the handler answered: its status, how long it took and the start of its body', async () => {
    const said = `{"error":"unknown plan"}\n${'x'.repeat(5000)}`;
    const handler = await startServer((_req, res) => {
      res.writeHead(422, { 'content-type': 'application/json' }).end(said);
    });
    try {
      const l = spawnListen(
        ['--app', app(), '--forward-to', `${handler.url}/hook`, '--forward-tries', '1'],
        fx.dir,
        env(),
      );
      fx.running.push(l);
      await ready(l);
      const id = await send('subscription.created');
      await l.waitFor((lines) => lines.some((x) => x.type === 'forward_failed' && x.id === id));
      const line = l.lines.find((x) => x.type === 'forward_failed')!;
      // Bounded: the first 2 KiB of what the handler said, never the whole answer.
      expect(line).toMatchObject({ response_status: 422, response_excerpt: said.slice(0, 2048) });
      expect(line.response_ms).toBeGreaterThan(0);
      const listed = await runMkt(['webhooks', 'deliveries', '--app', app(), '--json'], fx.dir, {
        env: env(),
      });
      const summary = JSON.parse(listed.stdout).find((d: { id: string }) => d.id === id);
      expect(summary).toMatchObject({
        status: 'failed',
        response_status: 422,
        response_excerpt: said.slice(0, 2048),
      });
      expect(summary.latency_ms).toBeGreaterThan(0);
      const table = await runMkt(['webhooks', 'deliveries', '--app', app()], fx.dir, { env: env() });
      expect(table.stdout).toContain('{"error":"unknown plan"} xxx');
      l.child.kill('SIGINT');
      await l.exit();
    } finally {
      await handler.close();
    }
  });

  it('resends a journaled delivery to the recorded target', async () => {
    const l = listen();
    await ready(l);
    const sent = await trigger(t.sandbox.siteUrl, t.sandbox.seed.test_key, app(), 'subscription.created');
    await l.waitFor(() => forwardedIds(l).includes(sent.delivery_id));
    l.child.kill('SIGINT');
    await l.exit();
    const resend = await runMkt(['webhooks', 'resend', sent.delivery_id, '--app', app(), '--json'], fx.dir, {
      env: env(),
    });
    expect(resend.code).toBe(0);
    expect(JSON.parse(resend.stdout)).toMatchObject({ id: sent.delivery_id, ok: true, response_status: 200 });
    expect(accepted()).toEqual([sent.delivery_id, sent.delivery_id]);
    expect(fx.target.received[1]!.body).toBe(fx.target.received[0]!.body);
    const missing = await runMkt(['webhooks', 'resend', 'dlv_nope', '--app', app()], fx.dir, {
      env: env(),
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('mkt webhooks deliveries');
  });

  it('reconnects after the sandbox restarts on the same port and data dir; later events arrive once', async () => {
    // A sandbox whose data folder survives its restart (the default one is removed on close).
    await t.sandbox.close();
    const sandboxDir = join(fx.dir, 'sandbox');
    t.sandbox = await startTestSandbox({ dataDir: sandboxDir });
    const { port } = t.sandbox;
    const l = listen();
    await ready(l);
    const before = await send('subscription.created');
    await l.waitFor(() => forwardedIds(l).includes(before));
    await t.sandbox.close();
    await l.waitForStderr((e) => e.includes('"type":"reconnecting"'));
    // The port is free again, unless a client socket of another test took it as its own meanwhile.
    for (let attempt = 1; ; attempt++) {
      try {
        t.sandbox = await startTestSandbox({ dataDir: sandboxDir, port });
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt === 20) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    expect(t.sandbox.port).toBe(port);
    const after: string[] = [];
    for (const event of ['user.authorized', 'subscription.cancelled', 'user.revoked'])
      after.push(await send(event));
    await l.waitFor(() => after.every((id) => forwardedIds(l).includes(id)));
    // One more after those: a copy of any earlier one would have reached the target before it.
    const last = await send('subscription.created');
    await l.waitFor(() => forwardedIds(l).includes(last));
    expect(accepted()).toEqual([before, ...after, last]);
    // One outcome line each; they follow the target's answers, which may come back in another order.
    expect([...forwardedIds(l)].sort()).toEqual([before, ...after, last].sort());
    expect(l.lines.filter((x) => x.type === 'duplicate' || x.type === 'filtered')).toEqual([]);
    l.child.kill('SIGINT');
    expect(await l.exit()).toEqual({ code: 130, signal: null });
  });

  it('--events forwards only the events named; the others are journaled as filtered', async () => {
    const l = listen(['--events', 'subscription.created']);
    await ready(l);
    const sent: Record<string, string> = {};
    for (const event of ['user.authorized', 'subscription.created', 'subscription.cancelled']) {
      sent[event] = await send(event);
    }
    const filtered = () => l.lines.filter((x) => x.type === 'filtered');
    await l.waitFor(() => forwardedIds(l).includes(sent['subscription.created']!) && filtered().length === 2);
    expect(filtered().map((x) => [x.id, x.event, x.reason])).toEqual([
      [sent['user.authorized'], 'user.authorized', 'event_filter'],
      [sent['subscription.cancelled'], 'subscription.cancelled', 'event_filter'],
    ]);
    const last = await send('subscription.created');
    await l.waitFor(() => forwardedIds(l).includes(last));
    expect(accepted()).toEqual([sent['subscription.created'], last]);
    const list = await runMkt(
      ['webhooks', 'deliveries', '--app', app(), '--status', 'filtered', '--json'],
      fx.dir,
      { env: env() },
    );
    expect(list.code).toBe(0);
    expect(
      JSON.parse(list.stdout).map((d: { id: string; event: string; reason: string }) => [d.id, d.reason]),
    ).toEqual([
      [sent['user.authorized'], 'event_filter'],
      [sent['subscription.cancelled'], 'event_filter'],
    ]);
  });

  it('--print-secret prints the signing secret on stdout (a JSON line with --json)', async () => {
    const secret = t.sandbox.seed.app.webhook_secret;
    const j = listen(['--print-secret']);
    await ready(j);
    expect(j.lines[0]).toEqual({ type: 'secret', secret, source: 'marketplace' });
    j.child.kill('SIGINT');
    await j.exit();
    const h = listen(['--print-secret'], { json: false });
    await h.waitForStderr((e) => e.includes('Ready.'));
    expect(h.lines[0]).toEqual({ type: 'not_json', text: secret });
    // The first run stored what it read from the marketplace: the second finds it there.
    expect(h.stderr()).toContain(`(signing secret from the credential store (${t.sandbox.seed.app.id}))`);
    h.child.kill('SIGINT');
    expect(await h.exit()).toEqual({ code: 130, signal: null });
  });
});
