import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runMkt, tempDir } from '../support/cli.js';
import { startTestSandbox } from '../support/sandbox.js';
import { hasChromium } from '../support/chromium.js';
import { browserCommand, CHROMIUM_PERSON, readLog, storedToken } from './helpers.js';

// CI installs Debian's chromium; locally: apt-get install -y chromium.
describe.skipIf(!hasChromium())('mkt login with a real browser', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(() => sandbox.close());

  it('signs in when the person clicks Approve on the consent page in chromium', async () => {
    const dir = await tempDir();
    try {
      const fred = sandbox.seed.users.find((u) => u.plan === 'free')!;
      const log = join(dir.path, 'browser.log');
      const res = await runMkt(['login', '--client-id', sandbox.seed.app.client_id], dir.path, {
        env: {
          MKT_SITE_URL: sandbox.siteUrl,
          MKT_CLIENT_SECRET: sandbox.seed.app.client_secret,
          MKT_BROWSER: browserCommand(CHROMIUM_PERSON),
          PERSON_USER: fred.id,
          PERSON_LOG: log,
        },
        timeoutMs: 60_000,
      });
      expect(res.stderr).toContain(`✓ Logged in as ${fred.name}`);
      expect(res.code).toBe(0);
      expect((await storedToken(dir.path))?.user).toMatchObject({ id: fred.id });
      // The browser process outlives mkt by a moment; wait for its report of the final page.
      expect(await readLog(log, /./)).toEqual(['page Signed in']);
    } finally {
      await dir.remove();
    }
  }, 90_000);
});
