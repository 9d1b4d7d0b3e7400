import { describe, expect, it } from 'vitest';
import { runMkt } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';

// What a person sees when the environment decides who they are: a refused MKT_API_KEY or
// MKT_ACCESS_TOKEN is fixed in the environment (`mkt login` cannot help while it is set), and
// `auth status` for an API key names the app the key belongs to.

const ctx = useSandbox();
const site = () => ({ MKT_SITE_URL: ctx.sandbox.siteUrl });

describe('a refused credential from the environment', () => {
  for (const [name, value] of [
    ['MKT_API_KEY', 'test_revokedOrMistyped'],
    ['MKT_ACCESS_TOKEN', 'at_revokedOrMistyped'],
  ] as const) {
    it(`${name}: the hint says to fix or unset it, never \`mkt login\``, async () => {
      // Signed in with a good key: the variable still wins, so logging in again would change nothing.
      const stored = await runMkt(['login', '--with-api-key'], ctx.dir, {
        env: site(),
        input: ctx.sandbox.seed.test_key,
      });
      expect(stored.code, stored.stderr).toBe(0);
      const res = await runMkt(['whoami'], ctx.dir, { env: { ...site(), [name]: value } });
      expect(res.code).toBe(4);
      expect(res.stderr).toContain(`unset ${name}`);
      expect(res.stderr).not.toMatch(/Try: mkt login/);
    });
  }
});

describe('mkt auth token with MKT_API_KEY set', () => {
  it('says to unset the variable before signing in, not just `mkt login`', async () => {
    const res = await runMkt(['auth', 'token'], ctx.dir, {
      env: { ...site(), MKT_API_KEY: ctx.sandbox.seed.test_key },
    });
    expect(res.code).toBe(4);
    expect(res.stderr).toContain('Try: unset MKT_API_KEY');
    expect(res.stderr).not.toMatch(/Try: mkt login/);
  });
});

describe('mkt auth status with an API key', () => {
  it('names the app the key belongs to, on the terminal and in --json', async () => {
    const { app } = ctx.sandbox.seed;
    const login = await runMkt(['login', '--with-api-key'], ctx.dir, {
      env: site(),
      input: ctx.sandbox.seed.test_key,
    });
    expect(login.code, login.stderr).toBe(0);
    const text = await runMkt(['auth', 'status'], ctx.dir, { env: site() });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`App:\\s+${app.name} \\(${app.id}\\)`));
    const json = await runMkt(['auth', 'status', '--json'], ctx.dir, { env: site() });
    expect(JSON.parse(json.stdout)).toMatchObject({ kind: 'test_key', app: { id: app.id, name: app.name } });
  });
});
