import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMkt } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';
import { startServer, type TestServer } from '../support/server.js';

// `mkt events` and `mkt logs tail` against the sandbox: the marketplace's record of what it sent to
// the webhook URL (every attempt, what the URL answered), resend, and the live request log.

const ctx = useSandbox();
let receiver: TestServer;
let down = true;

beforeAll(async () => {
  // A handler that is down (with an escape sequence in its answer) until the test brings it up.
  receiver = await startServer((_req, res) => {
    if (down) res.writeHead(503, { 'content-type': 'text/plain' }).end('down for maintenance \u001b[2J');
    else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok, handled');
  });
});
afterAll(() => receiver?.close());

const app = () => ctx.sandbox.seed.app.id;
const mkt = (args: string[]) => ctx.mkt([...args, '--app', app()]);
const json = async (args: string[]) => {
  const r = await mkt([...args, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
};

describe('mkt events', () => {
  it('lists, shows and resends a delivery the webhook URL refused, with each attempt and its answer', async () => {
    expect((await mkt(['apps', 'update', '--webhook-url', `${receiver.url}/hooks`])).code).toBe(0);
    const sent = await mkt(['trigger', 'user.authorized', '--set', 'data.scopes=identity:read']);
    expect(sent.code, sent.stderr).toBe(0);
    const id = sent.stdout.trim();
    // Six tries, 20 ms to 320 ms apart in the test sandbox: then the delivery has failed.
    await receiver.waitFor(6);
    let delivery = await json(['events', 'get', id]);
    for (let i = 0; delivery.state !== 'failed' && i < 50; i++) {
      await new Promise((r) => setTimeout(r, 100));
      delivery = await json(['events', 'get', id]);
    }
    expect(delivery).toMatchObject({
      id,
      event: 'user.authorized',
      state: 'failed',
      url: `${receiver.url}/hooks`,
    });
    expect(delivery.attempts).toHaveLength(6);
    expect(delivery.attempts[0]).toMatchObject({
      status: 503,
      error: 'HTTP 503',
      response_excerpt: 'down for maintenance \u001b[2J',
    });
    expect(typeof delivery.attempts[0].latency_ms).toBe('number');

    const failed = await mkt(['events', 'list', '--state', 'failed']);
    expect(failed.stdout).toMatch(
      new RegExp(`^${id}\\tuser\\.authorized\\tfailed\\t6\\t503 in [\\d.]+ ms\\t`, 'm'),
    );
    expect((await mkt(['events', 'list', '--state', 'succeeded'])).stdout).not.toContain(id);
    const shown = await mkt(['events', 'get', id]);
    expect(shown.stdout).toContain('answered: down for maintenance \\u001b[2J');
    expect(shown.stdout).not.toContain('\u001b');

    down = false;
    const resent = await mkt(['events', 'resend', id]);
    expect(resent.code, resent.stderr).toBe(0);
    expect(resent.stderr).toMatch(new RegExp(`Resent ${id} \\(user\\.authorized\\): 200 in [\\d.]+ ms\\.`));
    const after = await json(['events', 'get', id]);
    expect(after.state).toBe('succeeded');
    expect(after.attempts).toHaveLength(7);
    expect(after.attempts[6]).toMatchObject({ status: 200, error: null, response_excerpt: 'ok, handled' });

    // The same delivery id; a fresh timestamp, signed with the app's webhook secret.
    const [first, last] = [receiver.seen[0]!, receiver.seen.at(-1)!];
    expect(last.headers['x-marketplace-delivery']).toBe(id);
    expect(JSON.parse(last.body).data).toEqual(JSON.parse(first.body).data);
    expect(JSON.parse(last.body).timestamp).not.toBe(JSON.parse(first.body).timestamp);
    const secret = ctx.sandbox.seed.app.webhook_secret;
    const signature = `sha256=${createHmac('sha256', secret).update(last.raw).digest('hex')}`;
    expect(last.headers['x-marketplace-signature']).toBe(signature);
  });

  it('refuses what it cannot ask for, naming the request id of a refusal', async () => {
    const unknown = await mkt(['events', 'list', '--event', 'user.deleted']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown event "user.deleted"');
    const missing = await mkt(['events', 'get', 'dlv_missing']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No delivery "dlv_missing"');
    expect(missing.stderr).toMatch(/Request ID: req_[0-9a-f]{24}/);
  });
});

describe('mkt logs tail against the sandbox', () => {
  it('shows each API request as it is answered, with the credential and the request id', async () => {
    const tail = startMkt(['logs', 'tail', '--app', app(), '--json', '--path', '/apps'], ctx.dir, {
      env: ctx.env,
    });
    try {
      await tail.waitForStderr(/"type":"ready"/);
      const r = await mkt(['plans', 'get', 'no-such-plan', '--verbose']);
      const requestId = /\(\d+ ms, (req_\w+)\)/.exec(r.stderr)![1];
      await tail.waitFor((lines) => lines.some((l) => l.id === requestId));
      const line = tail.lines.find((l) => l.id === requestId)!;
      expect(line).toMatchObject({
        method: 'GET',
        // The route the router matched, not the raw path.
        path: '/api/v1/apps/:app_id/plans/:plan_id',
        status: 404,
        error_code: 'not_found',
        credential: { kind: 'test_key' },
        user_id: null,
      });
      // A path no route matches is kept as such: the caller's text is not.
      const headers = { 'x-api-key': ctx.sandbox.seed.test_key };
      const typo = await fetch(`${ctx.sandbox.siteUrl}/api/v1/apps/${app()}/plnas-typo-sk_abc`, { headers });
      expect(typo.status).toBe(404);
      const typoId = typo.headers.get('x-request-id');
      const log = await (
        await fetch(`${ctx.sandbox.siteUrl}/api/v1/apps/${app()}/logs?limit=100`, { headers })
      ).json();
      const logged = (log as { data: Array<{ id: string }> }).data;
      expect(logged.find((l) => l.id === typoId)).toMatchObject({ path: '(no route)', status: 404 });
      expect(JSON.stringify(logged)).not.toContain('plnas-typo');
      expect(JSON.stringify(tail.lines)).not.toContain(ctx.sandbox.seed.test_key);
    } finally {
      tail.child.kill('SIGINT');
      await tail.exit();
    }
  });
});
