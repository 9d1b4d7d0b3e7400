// An account's name as the server gave it is shown escaped by `login`, `auth list` and `logout`:
// colour (ESC[31m) and conceal (ESC[8m) codes in a name are shown, never obeyed, while mkt's own
// colours on the same lines stay.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMkt, tempDir } from '../support/cli.js';
import { startServer, type TestServer } from '../support/server.js';

const NAME = 'Ann\u001b[31mRed\u001b[8mHidden\u001b[0m';

let dir: { path: string; remove(): Promise<void> };
let server: TestServer | undefined;
beforeEach(async () => {
  dir = await tempDir();
  server = await startServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url?.startsWith('/api/v1/apps')) res.end(JSON.stringify({ data: [], has_more: false }));
    else res.end(JSON.stringify({ id: 'usr_1', name: NAME, email: 'ann@example.com', avatar_url: null }));
  });
});
afterEach(async () => {
  await server?.close();
  await dir.remove();
});

const mkt = (args: string[], input?: string) =>
  runMkt(args, dir.path, {
    env: { MKT_SITE_URL: server!.url, MKT_HTTP_TIMEOUT: '5', FORCE_COLOR: '1' },
    input,
  });

/** The name's codes are there escaped; no raw ESC but mkt's own colour around ✓. */
function expectEscaped(text: string) {
  expect(text).toContain('Ann\\u001b[31mRed\\u001b[8mHidden\\u001b[0m');
  expect(text).not.toContain('\u001b[31mRed');
  expect(text).not.toContain('\u001b[8m');
}

describe("an account's name with SGR codes", () => {
  it('is shown escaped by login, auth list and logout', async () => {
    const login = await mkt(['login', '--with-api-key'], 'test_hostile_name\n');
    expect(login.code, login.stderr).toBe(0);
    expectEscaped(login.stderr);
    const list = await mkt(['auth', 'list']);
    expect(list.code, list.stderr).toBe(0);
    expectEscaped(list.stdout);
    const logout = await mkt(['logout']);
    expect(logout.code, logout.stderr).toBe(0);
    expectEscaped(logout.stderr);
  });
});
