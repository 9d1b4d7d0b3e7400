import { afterEach, describe, expect, it } from 'vitest';
import { runMkt, startMkt, tempDir } from '../support/cli.js';
import { json, startServer, type TestServer } from '../support/server.js';

const entry = (n: number, status: number, method: string, path: string) => ({
  id: `req_${n}`,
  at: `2026-11-25T12:00:0${n}.000Z`,
  method,
  path,
  status,
  latency_ms: n,
  credential: { kind: 'test_key', id: 'key_1' },
  user_id: null,
  error_code: status >= 400 ? 'not_found' : null,
});

const E1 = entry(1, 200, 'GET', '/api/v1/whoami');
// A path with an escape sequence in it: it must reach the terminal as text, not as an escape.
const E2 = entry(2, 404, 'GET', '/api/v1/apps/app_t/plans/\u001b[31mred');
const E3 = entry(3, 500, 'POST', '/api/v1/simulator/events');

const sse = (e: object & { id: string }) => `id: ${e.id}\nevent: request\ndata: ${JSON.stringify(e)}\n\n`;

/** A marketplace whose log stream sends E1 and E2 and drops; the next connection gets E3 and stays open. */
async function logServer(): Promise<TestServer & { lastEventIds: Array<string | undefined> }> {
  const lastEventIds: Array<string | undefined> = [];
  const server = await startServer((req, res) => {
    if (req.url?.startsWith('/api/v1/apps/app_t/logs/stream')) {
      lastEventIds.push(req.headers['last-event-id'] as string | undefined);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (lastEventIds.length === 1) res.end(`: hello\n\n${sse(E1)}${sse(E2)}`);
      else res.write(sse(E3));
      return;
    }
    if (req.url?.startsWith('/api/v1/apps/app_gone/logs/stream'))
      return json(res, 404, { error: { code: 'not_found', message: 'No app with id "app_gone".' } });
    if (req.url?.startsWith('/api/v1/apps/app_locked/logs/stream'))
      return json(res, 401, { error: { code: 'unauthorized', message: 'The API key is not valid.' } });
    json(res, 404, { error: { code: 'not_found', message: 'nothing here' } });
  });
  return Object.assign(server, { lastEventIds });
}

describe('mkt logs tail', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0)) await f();
  });

  async function setup() {
    const server = await logServer();
    const dir = await tempDir();
    cleanup.push(
      () => server.close(),
      () => dir.remove(),
    );
    const env = { MKT_SITE_URL: server.url, MKT_API_KEY: 'test_0123456789abcdef' };
    return { server, dir: dir.path, env };
  }

  it('prints the requests that pass --status, escapes control characters, and resumes with Last-Event-ID', async () => {
    const { server, dir, env } = await setup();
    const mkt = startMkt(['logs', 'tail', '--app', 'app_t', '--status', '4xx,5xx'], dir, { env });
    cleanup.push(async () => mkt.child.kill('SIGKILL'));
    await mkt.waitFor((lines) => lines.some((l) => String(l.text).includes('req_3')));
    mkt.child.kill('SIGINT');
    expect((await mkt.exit()).code).toBe(130);
    const out = mkt.stdout();
    expect(out).not.toContain('req_1'); // a 200, filtered out
    expect(out).toContain(
      '404  GET     /api/v1/apps/app_t/plans/\\u001b[31mred  2 ms  test_key:key_1  -  req_2  not_found',
    );
    expect(out).toMatch(/500 {2}POST {4}\/api\/v1\/simulator\/events {2}3 ms .* req_3/);
    expect(out).not.toContain('\u001b');
    // The second connection asked for what came after the last entry it saw.
    expect(server.lastEventIds).toEqual([undefined, 'req_2']);
    expect(mkt.stderr()).toMatch(/Lost the log stream \(the server closed the stream\); reconnecting/);
  });

  it('--json prints each entry as it came, one line each; --path matches with or without /api/v1', async () => {
    const { dir, env } = await setup();
    const mkt = startMkt(['logs', 'tail', '--app', 'app_t', '--path', '/whoami', '--json'], dir, { env });
    cleanup.push(async () => mkt.child.kill('SIGKILL'));
    // After the drop it has read everything the server will send to a new connection's first turn.
    await mkt.waitForStderr(/"type":"reconnecting"/);
    mkt.child.kill('SIGINT');
    await mkt.exit();
    expect(mkt.lines).toEqual([E1]);
  });

  it('a refusal ends it with the API error: 404 exits 1, 401 exits 4', async () => {
    const { dir, env } = await setup();
    const gone = await runMkt(['logs', 'tail', '--app', 'app_gone'], dir, { env, timeoutMs: 15_000 });
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('No app with id "app_gone".');
    const locked = await runMkt(['logs', 'tail', '--app', 'app_locked'], dir, { env, timeoutMs: 15_000 });
    expect(locked.code).toBe(4);
    expect(locked.stderr).toContain('The API key is not valid.');
  });

  it('refuses a filter it cannot read (exit 2) before connecting', async () => {
    const { server, dir, env } = await setup();
    const bad = await runMkt(['logs', 'tail', '--app', 'app_t', '--status', '4x'], dir, { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--status "4x" is not a status');
    const path = await runMkt(['logs', 'tail', '--app', 'app_t', '--path', 'apps'], dir, { env });
    expect(path.code).toBe(2);
    expect(path.stderr).toContain('must start with "/"');
    expect(server.seen).toHaveLength(0);
  });
});
