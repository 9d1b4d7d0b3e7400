import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MKT_BIN, baseEnv } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';
import { typeInTerminal } from '../support/terminal.js';

describe('mkt apps preview', () => {
  const ctx = useSandbox({ sandboxPerTest: true });
  const app = () => ctx.sandbox.seed.app;
  const user = () => ctx.sandbox.seed.users[0]!.id;

  it('without an embed URL, names the command that sets one', async () => {
    const res = await ctx.mkt(['apps', 'preview', '--user', user()]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`App ${app().id} has no embed URL`);
    expect(res.stderr).toContain(`mkt apps update ${app().id} --embed-url https://…`);
    expect(res.stdout).toBe('');
    const link = await fetch(`${ctx.sandbox.siteUrl}/api/v1/apps/${app().id}/preview-links`, {
      method: 'POST',
      headers: { 'x-api-key': ctx.sandbox.seed.test_key, 'content-type': 'application/json' },
      body: JSON.stringify({ user_id: user() }),
    });
    const page = await fetch(((await link.json()) as { url: string }).url);
    expect(await page.text()).toContain(`mkt apps update ${app().id} --embed-url &lt;url&gt;`);
  });

  it('prints the dashboard URL that embeds the app for the test user (and --json)', async () => {
    const set = await ctx.mkt(['apps', 'update', '--embed-url', 'https://embed.example/app']);
    expect(set.code, set.stderr).toBe(0);
    const res = await ctx.mkt(['apps', 'preview', '--user', user()]);
    expect(res.code, res.stderr).toBe(0);
    // The dashboard's address with a preview pass: the capability that opens it (an hour).
    const dashboard = `${ctx.sandbox.siteUrl}/dashboard/apps/${app().id}?preview=`;
    const url = res.stdout.trim();
    expect(url.startsWith(dashboard)).toBe(true);
    expect(url).toMatch(new RegExp(`\\?preview=[\\w-]{43}&user_id=${user()}$`));
    const json = await ctx.mkt(['apps', 'preview', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({
      url: expect.stringMatching(/\?preview=[\w-]{43}$/),
      app_id: app().id,
      user_id: null,
      embed_url: 'https://embed.example/app',
    });
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('id="app-frame"');
    const bad = await ctx.mkt(['apps', 'preview', '--user', 'ada']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--user "ada" is not a test user id (usr_…).');
  });

  it('on a terminal, opens the URL with the configured browser and never hands it the secrets', async () => {
    await ctx.mkt(['apps', 'update', '--embed-url', 'http://127.0.0.1:9/embed']);
    const opened = join(ctx.dir, 'opened.txt');
    const recorder = `require('fs').writeFileSync(process.env.OPENED, JSON.stringify([process.argv[1], process.env.MKT_CLIENT_SECRET ?? null]))`;
    const terminal = typeInTerminal(`"${process.execPath}" "${MKT_BIN}" apps preview --user ${user()}`, {
      env: {
        ...baseEnv(ctx.dir),
        ...ctx.env,
        MKT_CLIENT_SECRET: app().client_secret,
        OPENED: opened,
        MKT_BROWSER: `"${process.execPath}" -e "${recorder}"`,
      },
    });
    expect(await terminal.exit, terminal.screen()).toBe(0);
    expect(terminal.screen()).toContain(`Opened the dashboard of ${app().id} in your browser.`);
    // The browser gets a launch file (0600) that sends it on, never the capability itself.
    await expect.poll(() => readFile(opened, 'utf8').catch(() => '')).toMatch(/^\["file:/);
    const [fileUrl, secret] = JSON.parse(await readFile(opened, 'utf8')) as [string, string | null];
    expect(secret).toBeNull();
    expect(fileUrl).not.toContain('preview=');
    const launch = await readFile(new URL(fileUrl), 'utf8');
    expect(launch).toContain(`/dashboard/apps/${app().id}?preview=`);
  });
});

describe('--embed-url is https or a loopback http page', () => {
  const ctx = useSandbox();

  it('refuses plain http elsewhere, and accepts https and loopback http', async () => {
    const res = await ctx.mkt(['apps', 'update', '--embed-url', 'http://embed.example/app']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      '--embed-url "http://embed.example/app" uses plain http on a host that is not loopback; expected https://… or, for a page on your machine, http://127.0.0.1, http://localhost, http://[::1] (or "" to clear it).',
    );
    for (const url of [
      'https://embed.example/app',
      'http://127.0.0.1:3000/x',
      'http://[::1]:3000/',
      'http://localhost:8080/',
    ]) {
      const ok = await ctx.mkt(['apps', 'update', '--embed-url', url, '--json']);
      expect(ok.code, ok.stderr).toBe(0);
      expect(JSON.parse(ok.stdout).embed_url).toBe(url);
    }
  });
});
