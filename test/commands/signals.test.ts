import { describe, expect, it } from 'vitest';
import { AUTHORIZE_URL } from '../auth/helpers.js';
import { startMkt } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';

// Ctrl-C and SIGTERM end every command the same way (exit 130 and 143), also one that does not
// watch for them: `mkt login` waiting for the browser's redirect.

const ctx = useSandbox();

describe('a signal while a command waits', () => {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`${signal} ends mkt login with exit ${code}`, async () => {
      const mkt = startMkt(
        ['login', '--no-browser', '--client-id', ctx.sandbox.seed.app.client_id],
        ctx.dir,
        {
          env: { ...ctx.env, MKT_API_KEY: undefined, MKT_CLIENT_SECRET: ctx.sandbox.seed.app.client_secret },
        },
      );
      await mkt.waitForStderr(AUTHORIZE_URL);
      mkt.child.kill(signal);
      expect((await mkt.exit()).code).toBe(code);
    });
  }
});
