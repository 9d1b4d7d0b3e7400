import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runMkt, tempDir } from '../support/cli.js';
import { startTestSandbox } from '../support/sandbox.js';
import { browserCommand, PERSON } from './helpers.js';

// Runs under scripts/with-keyring.sh (a private D-Bus session with an unlocked gnome-keyring),
// which sets MKT_TEST_KEYCHAIN=1; there it must run, never skip.
describe.runIf(process.env.MKT_TEST_KEYCHAIN === '1')('mkt login with the OS keychain', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(() => sandbox.close());

  it('keeps the token in the keychain and writes no secret to the config folder', async () => {
    const dir = await tempDir();
    try {
      const env = {
        MKT_SITE_URL: sandbox.siteUrl,
        MKT_CLIENT_SECRET: sandbox.seed.app.client_secret,
        MKT_BROWSER: browserCommand(PERSON),
        MKT_CREDENTIAL_STORE: 'keychain',
        // The keyring's session bus and home come from with-keyring.sh, not the temp HOME.
        HOME: process.env.HOME,
        DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS,
        XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR,
        MKT_PROFILE: `kc${process.pid}`,
      };
      const login = await runMkt(['login', '--client-id', sandbox.seed.app.client_id], dir.path, {
        env,
        timeoutMs: 30_000,
      });
      expect(login.stderr).toContain('✓ Logged in as');
      expect(login.code).toBe(0);
      const status = await runMkt(['auth', 'status', '--json'], dir.path, { env });
      expect(status.code).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ kind: 'token', source: 'keychain' });
      const token = await runMkt(['auth', 'token'], dir.path, { env });
      expect(token.stdout).toMatch(/^at_/);

      const files = await readdir(dir.path);
      expect(files).not.toContain('credentials.json');
      for (const file of files.filter((f) => f.endsWith('.json'))) {
        expect(await readFile(join(dir.path, file), 'utf8')).not.toContain(token.stdout.trim());
      }
      const out = await runMkt(['logout'], dir.path, { env });
      expect(out.code).toBe(0);
      expect((await runMkt(['auth', 'status'], dir.path, { env })).code).toBe(4);
    } finally {
      await dir.remove();
    }
  }, 60_000);
});
