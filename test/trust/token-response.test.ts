// A hostile token endpoint answers a token that is not Bearer, or one holding a control character:
// refused with what is wrong (never stored, never "cannot reach"); an 80 MB token on stdin is
// refused by its size.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { baseEnv, MKT_BIN, runMkt, tempDir } from '../support/cli.js';
import type { TestServer } from '../support/server.js';
import { expiredSignIn, startHostileTokenServer } from './hostile/token-endpoint.js';

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

const stored = async () =>
  JSON.parse(JSON.parse(await readFile(join(dir.path, 'credentials.json'), 'utf8'))['default:oauth']) as {
    access_token: string;
  };

describe('a token response mkt cannot use', () => {
  for (const [what, answer, message] of [
    [
      'a MAC token',
      { token_type: 'MAC', access_token: 'at_mac', refresh_token: 'rt_mac' },
      'its token_type is "MAC"',
    ],
    [
      'a control character in the token',
      { token_type: 'bearer', access_token: 'at_\u0001bad', refresh_token: 'rt_ok' },
      'its access_token holds a space or a control character',
    ],
  ] as const) {
    it(`is refused with what is wrong: ${what}`, async () => {
      server = await startHostileTokenServer(() => answer);
      await expiredSignIn(dir.path, server.url);
      const r = await runMkt(['whoami'], dir.path, { env: { MKT_SITE_URL: server.url } });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(message);
      expect(r.stderr).not.toContain('Cannot reach');
      expect((await stored()).access_token).toBe('at_old');
    });
  }

  it('a Bearer token in any case is taken', async () => {
    server = await startHostileTokenServer(() => ({
      token_type: 'BEARER',
      access_token: 'at_ok',
      refresh_token: 'rt_ok',
    }));
    await expiredSignIn(dir.path, server.url);
    const r = await runMkt(['whoami'], dir.path, { env: { MKT_SITE_URL: server.url } });
    expect(r.code, r.stderr).toBe(0);
    expect((await stored()).access_token).toBe('at_ok');
  });
});

describe('an 80 MB token on stdin', () => {
  it('is refused by its size with a clear message', async () => {
    const env = { ...baseEnv(dir.path), MKT_CLIENT_SECRET: 'cs_x' };
    const child = spawn(process.execPath, [MKT_BIN, 'apps', 'verify-context-token'], { env });
    child.stdin.on('error', () => undefined); // mkt stops reading early: that is the point
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.end(Buffer.alloc(80 * 1024 * 1024, 'a'));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code, stderr).toBe(2);
    expect(stderr).toContain('The token on stdin is larger than 64 KiB');
  });
});
