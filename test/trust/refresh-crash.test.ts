// A crash (kill -9) just after the token endpoint rotated the refresh token: the CLI stores the new
// pair before it writes anything else, so the user stays signed in even against a server that
// keeps no grace for the old refresh token (this test's own, strict one).
import { afterEach, beforeEach, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { watch } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { baseEnv, MKT_BIN, runMkt, tempDir } from '../support/cli.js';
import { startServer, type TestServer } from '../support/server.js';

let dir: { path: string; remove(): Promise<void> };
let server: TestServer;
let valid: Set<string>;
let answered = false;
beforeEach(async () => {
  dir = await tempDir();
  valid = new Set(['rt_old']);
  answered = false;
  server = await startServer((req, res, seen) => {
    if (req.method === 'POST' && req.url === '/api/oauth/token') {
      const body = JSON.parse(seen.body) as { refresh_token: string };
      // Rotation without grace: the refresh token used is dead from now on.
      if (!valid.delete(body.refresh_token)) {
        res.writeHead(400, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: 'invalid_grant' }));
      }
      valid.add('rt_new');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: 'at_new', refresh_token: 'rt_new', expires_in: 3600 }));
      answered = true;
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":{"code":"not_found","message":"not found"}}');
  });
  const expired = {
    access_token: 'at_old',
    refresh_token: 'rt_old',
    token_type: 'Bearer',
    expires_at: Date.now() - 1000,
    issued_at: Date.now() - 3_600_000,
    client_id: 'cl_1',
    site_url: server.url,
  };
  await writeFile(
    join(dir.path, 'credentials.json'),
    JSON.stringify({ 'default:oauth': JSON.stringify(expired), 'default:client-secret:cl_1': 'secret_1' }),
    { mode: 0o600 },
  );
});
afterEach(async () => {
  await server.close();
  await dir.remove();
});

it('keeps the user signed in when mkt is killed right after the token response arrives', async () => {
  const env = { ...baseEnv(dir.path), MKT_SITE_URL: server.url };
  const child = spawn(process.execPath, [MKT_BIN, 'auth', 'token'], { env, stdio: 'ignore' });
  // mkt writes what it learned about the site once the token endpoint answered: killed right then.
  const watcher = watch(dir.path, (_event, name) => {
    if (answered && name === 'config.json') child.kill('SIGKILL');
  });
  const signal = await new Promise((resolve) => child.on('close', (_code, sig) => resolve(sig)));
  watcher.close();
  expect(answered).toBe(true);
  expect(signal).toBe('SIGKILL');
  const stored = JSON.parse(
    JSON.parse(await readFile(join(dir.path, 'credentials.json'), 'utf8'))['default:oauth'],
  );
  expect(stored.refresh_token).toBe('rt_new');
  const again = await runMkt(['auth', 'token'], dir.path, { env: { MKT_SITE_URL: server.url } });
  expect(again.code, again.stderr).toBe(0);
  expect(again.stdout.trim()).toBe('at_new');
});
