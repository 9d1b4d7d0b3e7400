import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMkt, tempDir } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';
import { hasChromium } from '../support/chromium.js';
import { browserCommand, CHROMIUM_PERSON, readLog, storedToken } from './helpers.js';

// CI installs Debian's chromium; locally: apt-get install -y chromium.
describe.skipIf(!hasChromium())('mkt login with a real browser', () => {
  const ctx = useSandbox();

  it('signs in when the person clicks Approve on the consent page in chromium', async () => {
    const dir = await tempDir();
    try {
      const fred = ctx.sandbox.seed.users.find((u) => u.plan === 'free')!;
      const log = join(ctx.dir, 'browser.log');
      const res = await runMkt(['login', '--client-id', ctx.sandbox.seed.app.client_id], ctx.dir, {
        env: {
          MKT_SITE_URL: ctx.sandbox.siteUrl,
          MKT_CLIENT_SECRET: ctx.sandbox.seed.app.client_secret,
          MKT_BROWSER: browserCommand(CHROMIUM_PERSON),
          PERSON_USER: fred.id,
          PERSON_LOG: log,
        },
        timeoutMs: 60_000,
      });
      expect(res.stderr).toContain(`✓ Logged in as ${fred.name}`);
      expect(res.code).toBe(0);
      expect((await storedToken(ctx.dir))?.user).toMatchObject({ id: fred.id });
      // The browser process outlives mkt by a moment; wait for its report of the final page.
      expect(await readLog(log, /./)).toEqual(['page Signed in']);
    } finally {
      await dir.remove();
    }
  }, 90_000);
});
