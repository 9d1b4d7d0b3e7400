import { verify } from '@octokit/webhooks-methods';
import { access, mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMkt } from '../support/cli.js';
import { startTestSandbox } from '../support/sandbox.js';
import { startServer } from '../support/server.js';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { post, sign, spawnListen, trigger, type ListenProcess, useListenFixture } from './helpers.js';

let sandbox: Sandbox;
// Not useSandbox: one test restarts the sandbox on the same folder and port.
beforeEach(async () => {
  sandbox = await startTestSandbox();
});
afterEach(() => sandbox.close());
const fx = useListenFixture();

const env = () => ({ MKT_SITE_URL: sandbox.siteUrl, MKT_API_KEY: sandbox.seed.test_key });
const app = () => sandbox.seed.app.id;

function listen(extra: string[] = [], options: { json?: boolean } = {}): ListenProcess {
  const l = spawnListen(
    [
      '--app',
      app(),
      '--forward-to',
      fx.target.url,
      '--forward-backoff',
      '50',
      '--forward-tries',
      '10',
      ...extra,
    ],
    fx.dir,
    env(),
    options,
  );
  fx.running.push(l);
  return l;
}
const ready = (l: ListenProcess) => l.waitFor((lines) => lines.some((x) => x.type === 'ready'));
const send = async (event: string) =>
  (await trigger(sandbox.siteUrl, sandbox.seed.test_key, app(), event)).delivery_id;
const journalFolder = () => join(fx.dir, 'data', 'webhooks', app());
const lockFile = () => join(journalFolder(), 'listen.lock');
const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );
const forwardedIds = (l: ListenProcess) => l.lines.filter((x) => x.type === 'forwarded').map((x) => x.id);
/** Delivery ids the target accepted (answered 2xx), in arrival order. */
const accepted = () =>
  fx.target.received
    .filter((r) => r.answered === 200)
    .map((r) => String(r.headers['x-marketplace-delivery']));

describe('mkt webhooks listen', () => {
  it('forwards relay deliveries with the exact bytes and headers, verifiable by an independent implementation', async () => {
    const l = listen();
    await ready(l);
    const sent = await trigger(sandbox.siteUrl, sandbox.seed.test_key, app(), 'subscription.created');
    await l.waitFor(() => forwardedIds(l).includes(sent.delivery_id));
    expect(fx.target.received).toHaveLength(1);
    const got = fx.target.received[0]!;
    expect(got.headers['x-marketplace-delivery']).toBe(sent.delivery_id);
    expect(got.headers['x-marketplace-event']).toBe('subscription.created');
    expect(got.headers['x-mkt-forwarded-by']).toMatch(/^mkt\//);
    expect(
      await verify(sandbox.seed.app.webhook_secret, got.body, String(got.headers['x-marketplace-signature'])),
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
    expect(journal).not.toContain(sandbox.seed.app.webhook_secret);
    l.child.kill('SIGINT');
    expect(await l.exit()).toEqual({ code: 130, signal: null });
  });

  it('keeps deliveries while the forward target is down and delivers each exactly once when it is back', async () => {
    const l = listen();
    await ready(l);
    fx.target.setDown(true);
    const ids: string[] = [];
    for (const event of ['subscription.created', 'user.authorized', 'subscription.cancelled']) {
      ids.push((await trigger(sandbox.siteUrl, sandbox.seed.test_key, app(), event)).delivery_id);
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
      (await trigger(sandbox.siteUrl, sandbox.seed.test_key, app(), 'subscription.created')).delivery_id,
    ];
    await l.waitFor(() => forwardedIds(l).includes(before[0]!));
    l.child.kill('SIGKILL');
    await l.exit();
    const during: string[] = [];
    for (let i = 0; i < 3; i++) {
      during.push((await trigger(sandbox.siteUrl, sandbox.seed.test_key, app(), 'user.revoked')).delivery_id);
    }
    l = listen();
    await l.waitFor(() => during.every((id) => forwardedIds(l).includes(id)));
    const after = (await trigger(sandbox.siteUrl, sandbox.seed.test_key, app(), 'subscription.cancelled'))
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
      during.push((await trigger(sandbox.siteUrl, sandbox.seed.test_key, app(), event)).delivery_id);
    }
    l = listen();
    await l.waitFor(() => during.every((id) => forwardedIds(l).includes(id)));
    expect(l.lines.find((x) => x.type === 'ready')).toMatchObject({ resume_after: 0 });
    const after = (await trigger(sandbox.siteUrl, sandbox.seed.test_key, app(), 'user.revoked')).delivery_id;
    await l.waitFor(() => forwardedIds(l).includes(after));
    expect(accepted()).toEqual([...during, after]);
    expect(l.lines.filter((x) => x.type === 'filtered')).toEqual([]);
    // Killed without a chance to flush, and started again: nothing twice, nothing lost.
    l.child.kill('SIGKILL');
    await l.exit();
    const later = (await trigger(sandbox.siteUrl, sandbox.seed.test_key, app(), 'subscription.created'))
      .delivery_id;
    l = listen();
    await l.waitFor(() => forwardedIds(l).includes(later));
    expect(accepted()).toEqual([...during, after, later]);
  });

  it('a fresh listen does not forward the history of the app', async () => {
    const old: string[] = [];
    for (let i = 0; i < 3; i++) {
      old.push((await trigger(sandbox.siteUrl, sandbox.seed.test_key, app(), 'user.authorized')).delivery_id);
    }
    const l = listen();
    await ready(l);
    expect(l.lines.find((x) => x.type === 'ready')).toMatchObject({ resume_after: null, position: 3 });
    const fresh = (await trigger(sandbox.siteUrl, sandbox.seed.test_key, app(), 'subscription.created'))
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
    const secret = sandbox.seed.app.webhook_secret;
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

  it('delivers a burst of 400 deliveries exactly once each, and a retried one only once', async () => {
    const l = listen(['--no-relay']);
    await ready(l);
    const receiver = String(l.lines.find((x) => x.type === 'ready')!.receiver);
    const secret = sandbox.seed.app.webhook_secret;
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
    const sent = await trigger(sandbox.siteUrl, sandbox.seed.test_key, app(), 'subscription.created');
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
    await sandbox.close();
    const sandboxDir = join(fx.dir, 'sandbox');
    sandbox = await startTestSandbox({ dataDir: sandboxDir });
    const { port } = sandbox;
    const l = listen();
    await ready(l);
    const before = await send('subscription.created');
    await l.waitFor(() => forwardedIds(l).includes(before));
    await sandbox.close();
    await l.waitForStderr((e) => e.includes('"type":"reconnecting"'));
    // The port is free again, unless a client socket of another test took it as its own meanwhile.
    for (let attempt = 1; ; attempt++) {
      try {
        sandbox = await startTestSandbox({ dataDir: sandboxDir, port });
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt === 20) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    expect(sandbox.port).toBe(port);
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
    const secret = sandbox.seed.app.webhook_secret;
    const j = listen(['--print-secret']);
    await ready(j);
    expect(j.lines[0]).toEqual({ type: 'secret', secret, source: 'marketplace' });
    j.child.kill('SIGINT');
    await j.exit();
    const h = listen(['--print-secret'], { json: false });
    await h.waitForStderr((e) => e.includes('Ready.'));
    expect(h.lines[0]).toEqual({ type: 'not_json', text: secret });
    // The first run stored what it read from the marketplace: the second finds it there.
    expect(h.stderr()).toContain(`(signing secret from the credential store (${sandbox.seed.app.id}))`);
    h.child.kill('SIGINT');
    expect(await h.exit()).toEqual({ code: 130, signal: null });
  });

  describe('one listener per journal', () => {
    it('refuses a second listen while the first runs; deliveries and resend keep working', async () => {
      const first = listen();
      await ready(first);
      const held = JSON.parse(await readFile(lockFile(), 'utf8'));
      expect(held).toMatchObject({ pid: first.child.pid, forward_to: fx.target.url });
      const second = await runMkt(
        ['webhooks', 'listen', '--app', app(), '--forward-to', fx.target.url],
        fx.dir,
        {
          env: env(),
          timeoutMs: 20_000,
        },
      );
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`pid ${first.child.pid}`);
      expect(second.stderr).toContain(journalFolder());
      expect(second.stderr).toContain(`mkt webhooks deliveries --app ${app()}`);
      const json = await runMkt(['webhooks', 'listen', '--app', app(), '--json'], fx.dir, {
        env: env(),
        timeoutMs: 20_000,
      });
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: 'listener_running' } });
      // The refused ones left the lock alone.
      expect(JSON.parse(await readFile(lockFile(), 'utf8'))).toEqual(held);

      const id = await send('subscription.created');
      await first.waitFor(() => forwardedIds(first).includes(id));
      const list = await runMkt(['webhooks', 'deliveries', '--app', app(), '--json'], fx.dir, {
        env: env(),
      });
      expect(list.code).toBe(0);
      expect(JSON.parse(list.stdout)).toMatchObject([{ id, status: 'forwarded' }]);
      const resend = await runMkt(['webhooks', 'resend', id, '--app', app(), '--json'], fx.dir, {
        env: env(),
      });
      expect(resend.code).toBe(0);
      expect(accepted()).toEqual([id, id]);

      // A delivery the listener is still retrying is its own: resend refuses it until it is settled.
      fx.target.setDown(true);
      const pending = await send('user.authorized');
      await new Promise<void>((resolve) => {
        const t = setInterval(() => fx.target.received.length >= 3 && (clearInterval(t), resolve()), 10);
      });
      const early = await runMkt(['webhooks', 'resend', pending, '--app', app()], fx.dir, { env: env() });
      expect(early.code).toBe(1);
      expect(early.stderr).toContain(`pid ${first.child.pid}`);
      fx.target.setDown(false);
      await first.waitFor(() => forwardedIds(first).includes(pending));
      expect(accepted()).toEqual([id, id, pending]);

      // The journal the listener writes on holds the resend's line whole, and reopens cleanly.
      first.child.kill('SIGINT');
      expect(await first.exit()).toEqual({ code: 130, signal: null });
      expect(await exists(lockFile())).toBe(false);
      expect(first.stderr()).not.toMatch(/unreadable|partly written/);
      const again = listen();
      await ready(again);
      expect(again.stderr()).not.toMatch(/unreadable|partly written|Took over/);
    });

    it('takes over the lock a killed listen left behind', async () => {
      const first = listen();
      await ready(first);
      first.child.kill('SIGKILL');
      await first.exit();
      expect(JSON.parse(await readFile(lockFile(), 'utf8'))).toMatchObject({ pid: first.child.pid });
      const second = listen();
      await ready(second);
      expect(second.stderr()).toContain(`Took over the journal lock of process ${first.child.pid}`);
      expect(JSON.parse(await readFile(lockFile(), 'utf8'))).toMatchObject({ pid: second.child.pid });
      const id = await send('subscription.created');
      await second.waitFor(() => forwardedIds(second).includes(id));
      expect(accepted()).toEqual([id]);
      second.child.kill('SIGTERM');
      expect(await second.exit()).toEqual({ code: 143, signal: null });
      expect(await exists(lockFile())).toBe(false);
    });

    it.runIf(process.platform === 'linux')(
      'takes over a lock whose pid now belongs to another process, and an empty one left by a listener that died starting',
      async () => {
        await mkdir(journalFolder(), { recursive: true });
        // This test's own process is alive, but started long after the lock was written: the pid was reused.
        const reused = {
          pid: process.pid,
          started_at: '2020-01-01T00:00:00.000Z',
          host: hostname(),
          forward_to: null,
        };
        await writeFile(lockFile(), JSON.stringify(reused));
        let l = listen();
        await ready(l);
        expect(l.stderr()).toContain(`Took over the journal lock of process ${process.pid}`);
        l.child.kill('SIGINT');
        await l.exit();
        await writeFile(lockFile(), '');
        const old = new Date(Date.now() - 60_000);
        await utimes(lockFile(), old, old);
        l = listen();
        await ready(l);
        expect(l.stderr()).toContain('Took over the journal lock');
        expect(JSON.parse(await readFile(lockFile(), 'utf8'))).toMatchObject({ pid: l.child.pid });
      },
    );
  });
});
