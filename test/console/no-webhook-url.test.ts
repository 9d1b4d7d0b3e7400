import { describe, expect, it } from 'vitest';
import { startMkt } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';
import { startServer } from '../support/server.js';

// A delivery of an app with no webhook URL goes only over the relay: the marketplace's record says
// "not sent: no webhook URL" (state `not_sent`), never `failed` with 0 attempts; `mkt events` adds
// what this machine's `mkt webhooks listen` recorded of it.

const ctx = useSandbox();
const app = () => ctx.sandbox.seed.app.id;
const api = async (path: string): Promise<{ data: Array<{ id: string }> } & Record<string, unknown>> =>
  (
    await fetch(`${ctx.sandbox.siteUrl}/api/v1${path}`, {
      headers: { 'x-api-key': ctx.sandbox.seed.test_key },
    })
  ).json() as Promise<{ data: Array<{ id: string }> } & Record<string, unknown>>;

describe('a delivery with no webhook URL', () => {
  it('is not_sent in the record, the console and mkt events, with listen’s outcome when it has one', async () => {
    expect((await ctx.mkt(['apps', 'update', '--webhook-url', '', '--app', app()])).code).toBe(0);
    // One before listen runs: nobody received it.
    const alone = await ctx.mkt(['trigger', 'user.revoked', '--json', '--app', app()]);
    expect(alone.code, alone.stderr).toBe(0);
    const aloneId = JSON.parse(alone.stdout).delivery_id as string;

    const target = await startServer((_req, res) => res.writeHead(204).end());
    const listen = startMkt(
      ['webhooks', 'listen', '--forward-to', `${target.url}/hooks`, '--app', app()],
      ctx.dir,
      {
        env: ctx.env,
        timeoutMs: 30_000,
      },
    );
    let relayedId: string;
    try {
      await listen.waitForStderr(/Ready/);
      const sent = await ctx.mkt(['trigger', 'user.revoked', '--json', '--app', app()]);
      expect(sent.code, sent.stderr).toBe(0);
      relayedId = JSON.parse(sent.stdout).delivery_id as string;
      await target.waitFor(1, 10_000);
      await listen
        .waitForStderr(new RegExp(`${relayedId}.*204|204.*${relayedId}`), 10_000)
        .catch(() => undefined);
    } finally {
      listen.child.kill('SIGINT');
      await listen.exit();
      await target.close();
    }

    // The sandbox's record.
    const record = await api(`/apps/${app()}/deliveries/${relayedId}`);
    expect(record).toMatchObject({ state: 'not_sent', attempt_count: 0, url: null });
    const notSent = await api(`/apps/${app()}/deliveries?state=not_sent&limit=100`);
    expect(notSent.data.map((d: { id: string }) => d.id)).toEqual(
      expect.arrayContaining([relayedId, aloneId]),
    );
    const failed = await api(`/apps/${app()}/deliveries?state=failed&limit=100`);
    expect(failed.data.map((d: { id: string }) => d.id)).not.toContain(relayedId);

    // mkt events: listen's outcome for the relayed one, "not sent" for the other.
    const got = await ctx.mkt(['events', 'get', relayedId, '--app', app(), '--json']);
    expect(JSON.parse(got.stdout)).toMatchObject({
      state: 'not_sent',
      relay: { status: 'forwarded', response_status: 204 },
    });
    const shown = await ctx.mkt(['events', 'get', relayedId, '--app', app()]);
    expect(shown.stdout).toMatch(/state:\s+relayed: forwarded 204/);
    expect(shown.stdout).not.toMatch(/No attempts yet|failed/);
    const list = await ctx.mkt(['events', 'list', '--app', app()]);
    expect(list.stdout).toMatch(
      new RegExp(`^${relayedId}\\tuser\\.revoked\\trelayed: forwarded 204\\t0\\t`, 'm'),
    );
    expect(list.stdout).toMatch(
      new RegExp(`^${aloneId}\\tuser\\.revoked\\tnot sent: no webhook URL\\t0\\t`, 'm'),
    );

    // The console's Deliveries page.
    const link = await ctx.sandbox.consoleLink();
    const jar = await fetch(link.url, { redirect: 'manual' });
    const cookie = (jar.headers.get('set-cookie') ?? '').split(';')[0]!;
    const page = await (
      await fetch(`${ctx.sandbox.siteUrl}/console/apps/${app()}/deliveries`, { headers: { cookie } })
    ).text();
    expect(page).toContain('not sent: no webhook URL');
  }, 90_000);
});
