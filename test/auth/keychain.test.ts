import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMkt, tempDir } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';
import { signInEnv } from './helpers.js';

// Runs under scripts/with-keyring.sh (a private D-Bus session with an unlocked gnome-keyring),
// which sets MKT_TEST_KEYCHAIN=1; there it must run, never skip.
describe.runIf(process.env.MKT_TEST_KEYCHAIN === '1')('mkt login with the OS keychain', () => {
  const ctx = useSandbox();

  it('keeps the token in the keychain and writes no secret to the config folder', async () => {
    const dir = await tempDir();
    try {
      const env = {
        ...signInEnv(ctx.sandbox),
        MKT_CREDENTIAL_STORE: 'keychain',
        // The keyring's session bus and home come from with-keyring.sh, not the temp HOME.
        HOME: process.env.HOME,
        DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS,
        XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR,
        MKT_PROFILE: `kc${process.pid}`,
      };
      const login = await runMkt(['login', '--client-id', ctx.sandbox.seed.app.client_id], ctx.dir, {
        env,
        timeoutMs: 30_000,
      });
      expect(login.stderr).toContain('✓ Logged in as');
      expect(login.code).toBe(0);
      const status = await runMkt(['auth', 'status', '--json'], ctx.dir, { env });
      expect(status.code).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ kind: 'token', source: 'keychain' });
      const token = await runMkt(['auth', 'token'], ctx.dir, { env });
      expect(token.stdout).toMatch(/^at_/);

      const files = await readdir(ctx.dir);
      expect(files).not.toContain('credentials.json');
      for (const file of files.filter((f) => f.endsWith('.json'))) {
        expect(await readFile(join(ctx.dir, file), 'utf8')).not.toContain(token.stdout.trim());
      }
      const out = await runMkt(['logout'], ctx.dir, { env });
      expect(out.code).toBe(0);
      expect((await runMkt(['auth', 'status'], ctx.dir, { env })).code).toBe(4);
    } finally {
      await dir.remove();
    }
  }, 60_000);
});
