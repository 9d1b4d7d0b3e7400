import { describe, expect, it } from 'vitest';
import { runMkt, tempDir } from '../support/cli.js';
import { developerToken, useSandbox } from '../support/sandbox.js';

// The first hour of a new user, as they type it: a fresh config folder, no terminal, the sandbox's
// ids in place of the README's placeholders.

const ctx = useSandbox({ dirPerTest: true });
const seed = () => ctx.sandbox.seed;
const ada = () => seed().users.find((u) => u.status === 'active')!.id;

describe('the object a command acts on is positional', () => {
  it('apps get|update APP, as the dashboard tells; --app keeps working; two different apps are refused', async () => {
    const app = seed().app.id;
    const get = await ctx.mkt(['apps', 'get', app, '--json']);
    expect(get.code, get.stderr).toBe(0);
    expect(JSON.parse(get.stdout).id).toBe(app);
    const update = await ctx.mkt([
      'apps',
      'update',
      app,
      '--embed-url',
      'https://acme.example/embed',
      '--json',
    ]);
    expect(update.code, update.stderr).toBe(0);
    expect(JSON.parse(update.stdout).embed_url).toBe('https://acme.example/embed');
    expect((await ctx.mkt(['apps', 'get', '--app', app, '--json'])).code).toBe(0);
    const both = await ctx.mkt(['apps', 'get', app, '--app', 'app_other']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain(`Two apps given: ${app} and --app app_other`);
    const extra = await ctx.mkt(['apps', 'get', app, 'extra']);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('extra');
    expect(extra.stderr).not.toContain('not a mkt command');
  });

  it('an id from an example that does not exist hints the list of ids there are', async () => {
    const res = await ctx.mkt(['apps', 'get', 'app_123']);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('No app with id "app_123"');
    expect(res.stderr).toContain('Try: mkt apps list');
  });
});

describe('which app', () => {
  it("a key acts on its own app, not on the profile's default app", async () => {
    // The profile's default is another app (set while signed in as its developer).
    const token = await developerToken(ctx.sandbox, ['identity:read', 'apps:write']);
    const dev = { MKT_API_KEY: undefined, MKT_ACCESS_TOKEN: token };
    const other = await ctx.mkt(['apps', 'create', '--name', 'Other', '--json'], dev);
    expect(other.code, other.stderr).toBe(0);
    const otherId = JSON.parse(other.stdout).id as string;
    expect((await ctx.mkt(['apps', 'use', otherId], dev)).code).toBe(0);
    // With the key: its own app.
    const get = await ctx.mkt(['apps', 'get', '--json']);
    expect(get.code, get.stderr).toBe(0);
    expect(JSON.parse(get.stdout).id).toBe(seed().app.id);
    const plans = await ctx.mkt(['plans', 'list', '--json']);
    expect(plans.code, plans.stderr).toBe(0);
    // Signed in as the developer: the profile's default.
    const mine = await ctx.mkt(['apps', 'get', '--json'], dev);
    expect(JSON.parse(mine.stdout).id).toBe(otherId);
    // --app first: the key is refused for another app, in one sentence.
    const refused = await ctx.mkt(['plans', 'list', '--app', otherId]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('Try: mkt apps get   (the app of this API key)');
  });
});

describe('piped output is the data alone', () => {
  it('T=$(mkt simulator authorize --user U) is the token, which then works as MKT_ACCESS_TOKEN', async () => {
    const res = await ctx.mkt(['simulator', 'authorize', '--user', ada()]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^\S+\n$/);
    const whoami = await ctx.mkt(['whoami', '--json'], {
      MKT_API_KEY: undefined,
      MKT_ACCESS_TOKEN: res.stdout.trim(),
    });
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(JSON.parse(whoami.stdout).id).toBe(ada());
  });

  it('a malformed MKT_ACCESS_TOKEN (a captured table) is exit 4 saying so, never "cannot reach"', async () => {
    const res = await ctx.mkt(['whoami'], {
      MKT_API_KEY: undefined,
      MKT_ACCESS_TOKEN: 'access_token:  at_1\ntoken_type:    Bearer',
    });
    expect(res.code).toBe(4);
    expect(res.stderr).toContain('MKT_ACCESS_TOKEN is not an access token');
    expect(res.stderr).not.toMatch(/Cannot reach|sandbox start|header content/);
  });

  it('keys create prints the key alone on stdout and names its key_… id on stderr', async () => {
    const res = await ctx.mkt(['keys', 'create']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^test_\S+\n$/);
    const id = /Created test key (key_\w+)/.exec(res.stderr)?.[1];
    expect(id).toBeDefined();
    expect((await ctx.mkt(['keys', 'revoke', id!, '--yes'])).code).toBe(0);
  });

  it('config get site-url prints the URL in effect, as config list does', async () => {
    const res = await ctx.mkt(['config', 'get', 'site-url']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe(`${ctx.sandbox.siteUrl}\n`);
    const fresh = await tempDir();
    try {
      const byDefault = await runMkt(['config', 'get', 'site-url'], fresh.path);
      expect(byDefault.code).toBe(0);
      expect(byDefault.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\n$/);
    } finally {
      await fresh.remove();
    }
  });

  it('a feature check that says no prints its reason, not "Error:"; --json prints the entitlement', async () => {
    const no = await ctx.mkt(['entitlements', '--user', ada(), '--feature', 'teleport']);
    expect(no.code).toBe(3);
    expect(no.stderr).toMatch(/^Plan "[^"]+" does not include "teleport"/);
    const json = await ctx.mkt(['entitlements', '--user', ada(), '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).user_id).toBe(ada());
  });
});

describe('one rule for the URLs users type', () => {
  it('--forward-to localhost:PORT/path means http:// in resend as in listen; the same refusal everywhere', async () => {
    // resend takes a bare host:port as listen does (it once read "localhost:" as the URL's scheme).
    const resend = await ctx.mkt(['webhooks', 'resend', 'dlv_none', '--forward-to', 'localhost:3000/hooks']);
    expect(resend.stderr).not.toContain('is not a URL');
    expect(resend.stderr).toContain('dlv_none');
    for (const argv of [
      ['webhooks', 'listen', '--forward-to', 'ftp://example.test/x'],
      ['webhooks', 'resend', 'dlv_1', '--forward-to', 'ftp://example.test/x'],
      ['apps', 'update', '--webhook-url', 'ftp://example.test/x'],
      ['apps', 'update', '--embed-url', 'ftp://example.test/x'],
    ]) {
      const res = await ctx.mkt(argv);
      expect(res.code, argv.join(' ')).toBe(2);
      expect(res.stderr).toContain('"ftp://example.test/x" must start with http:// or https://.');
    }
    const site = await ctx.mkt(['whoami'], { MKT_SITE_URL: 'ftp://example.test' });
    expect(site.code).toBe(2);
    expect(site.stderr).toContain('"ftp://example.test" (from env) must start with http:// or https://.');
  });
});

describe('small traps', () => {
  it('MKT_HTTP_TIMEOUT that is not a number is a usage error, not silently ignored', async () => {
    const res = await ctx.mkt(['whoami'], { MKT_HTTP_TIMEOUT: 'abc' });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('MKT_HTTP_TIMEOUT must be a number of seconds above 0, not "abc".');
  });

  it('plans update P --price keeps the plan’s currency', async () => {
    const res = await ctx.mkt(['plans', 'update', 'pro-monthly', '--price', '12.50', '--json']);
    expect(res.code, res.stderr).toBe(0);
    const plan = JSON.parse(res.stdout);
    expect(plan.price.currency).toBeTruthy();
    const free = await ctx.mkt(['plans', 'update', 'free', '--price', '3']);
    expect(free.code).toBe(2);
    expect(free.stderr).toContain('add --currency');
  });

  it('trigger --dry-run does not show the developer as the user the real send would not go to', async () => {
    const res = await ctx.mkt(['trigger', 'subscription.cancelled', '--dry-run', '--json']);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout).envelope.data.user_id).not.toBe(seed().developer.id);
  });

  it('an unbuilt clone says to build, without a Node stack', async () => {
    const clone = await tempDir();
    try {
      const { copyFile, mkdir } = await import('node:fs/promises');
      const { join } = await import('node:path');
      const { MKT_BIN } = await import('../support/cli.js');
      await mkdir(join(clone.path, 'bin'));
      await copyFile(MKT_BIN, join(clone.path, 'bin', 'run.js'));
      await copyFile(join(MKT_BIN, '..', 'package.json'), join(clone.path, 'bin', 'package.json'));
      const res = await runMkt(['whoami'], clone.path, { bin: join(clone.path, 'bin', 'run.js') });
      expect(res.code).toBe(1);
      expect(res.stderr).toBe('Error: mkt is not built yet in this folder.\n  Try: npm run build\n');
    } finally {
      await clone.remove();
    }
  });
});
