import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasChromium, launchChromium } from '../support/chromium.js';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../support/cli.js';
import {
  developerToken,
  killAllSandboxProcesses,
  startSandboxProcess,
  useSandbox,
} from '../support/sandbox.js';

const ctx = useSandbox();
afterEach(() => killAllSandboxProcesses());

/** GETs a console link without following it: its status, and where it leads. */
async function enter(
  url: string,
): Promise<{ status: number; location: string | null; cookie: string | null }> {
  const res = await fetch(url, { redirect: 'manual' });
  await res.text();
  return { status: res.status, location: res.headers.get('location'), cookie: res.headers.get('set-cookie') };
}

describe('mkt sandbox console', () => {
  it('prints a one-time link off a terminal; the link works once', async () => {
    const r = await ctx.mkt(['sandbox', 'console']);
    expect(r.code, r.stderr).toBe(0);
    const url = r.stdout.trim();
    expect(url).toMatch(new RegExp(`^${ctx.sandbox.siteUrl}/console/enter\\?ticket=[\\w-]{43}$`));
    const first = await enter(url);
    expect(first).toMatchObject({ status: 303, location: '/console' });
    expect(first.cookie).toMatch(
      /^mkt_console_\d+=[\w-]+; Max-Age=43200; Path=\/console; HttpOnly; SameSite=Strict$/,
    );
    expect((await enter(url)).status).toBe(403);
  });

  it('hands the browser a 0600 launch file, never the link: no argv or environment holds it, and Chromium lands in the console', async () => {
    const dir = await tempDir();
    try {
      // The browser stub records everything another local user could read of it: argv and environment.
      const seen = join(dir.path, 'seen.json');
      const browser = join(dir.path, 'browser.sh');
      await writeFile(
        browser,
        `#!/bin/sh\nexec "${process.execPath}" -e 'require("fs").writeFileSync(process.argv[1], JSON.stringify({argv: process.argv.slice(2), env: process.env}))' '${seen}' "$@"\n`,
      );
      await chmod(browser, 0o755);
      const r = await ctx.mkt(['sandbox', 'console', '--browser'], { MKT_BROWSER: browser });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('Opened the console in your browser');
      expect(r.stderr).not.toContain('ticket=');
      let recorded = '';
      for (let i = 0; !recorded && i < 100; i++) {
        recorded = await readFile(seen, 'utf8').catch(() => '');
        if (!recorded) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const { argv } = JSON.parse(recorded) as { argv: string[] };
      expect(argv).toHaveLength(1);
      expect(argv[0]).toMatch(/^file:\/\/\/.*\/launch\/link-[0-9a-f]+\.html$/);
      const file = fileURLToPath(argv[0]!);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect((await stat(dirname(file))).mode & 0o777).toBe(0o700);
      const ticket = /ticket=([\w-]+)/.exec(await readFile(file, 'utf8'))![1]!;
      expect(recorded).not.toContain(ticket);
      expect(r.stderr).toContain(file);
      if (!hasChromium()) return;
      const chromium = await launchChromium();
      try {
        const page = await chromium.newPage();
        await page.goto(argv[0]!);
        // The launch file sends the browser on to the link, which signs it in and leads to the console
        // (a session begun with the app's key: that app's page).
        const app = ctx.sandbox.seed.app;
        await expect.poll(() => page.title(), { timeout: 10_000 }).toBe(`${app.name} · mkt console`);
        expect(page.url()).toBe(`${ctx.sandbox.siteUrl}/console/apps/${app.id}`);
      } finally {
        await chromium.close();
      }
    } finally {
      await dir.remove();
    }
  });

  it('with no display and no browser set, says so truthfully and prints the link for the person to open', async () => {
    const r = await ctx.mkt(['sandbox', 'console', '--browser'], {
      DISPLAY: undefined,
      WAYLAND_DISPLAY: undefined,
      MKT_BROWSER: undefined,
      BROWSER: undefined,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('Opened');
    expect(r.stderr).toContain('Could not open a browser (no display');
    expect(r.stdout).toMatch(/\/console\/enter\?ticket=[\w-]{43}\n$/);
  });

  it('--json gives the link and its expiry; a sign-in without apps:write is refused', async () => {
    const r = await ctx.mkt(['sandbox', 'console', '--json']);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ url: expect.stringContaining('/console/enter?ticket='), opened: false });
    expect(Date.parse(doc.expires_at) - Date.now()).toBeGreaterThan(4 * 60_000);
    const token = await developerToken(ctx.sandbox, ['identity:read']);
    const refused = await ctx.mkt(['sandbox', 'console'], {
      MKT_API_KEY: undefined,
      MKT_ACCESS_TOKEN: token,
    });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('apps:write');
  });

  it('mkt sandbox start prints a one-time console link', async () => {
    const dir = await tempDir();
    try {
      const sandbox = await startSandboxProcess(join(dir.path, 'data'), dir.path);
      const url = sandbox.info.console_url as string;
      expect(url).toMatch(new RegExp(`^${sandbox.siteUrl}/console/enter\\?ticket=`));
      expect((await enter(url)).status).toBe(303);
      expect((await enter(url)).status).toBe(403);
    } finally {
      killAllSandboxProcesses();
      await dir.remove();
    }
  });
});
