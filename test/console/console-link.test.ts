import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
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

  it('opens the link with $MKT_BROWSER when asked, and says so', async () => {
    const dir = await tempDir();
    try {
      const opened = join(dir.path, 'opened.txt');
      const browser = join(dir.path, 'browser.sh');
      await writeFile(browser, `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`);
      await chmod(browser, 0o755);
      const r = await ctx.mkt(['sandbox', 'console', '--browser'], { MKT_BROWSER: browser });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('Opened the console in your browser');
      let url = '';
      for (let i = 0; !url && i < 50; i++) {
        url = await readFile(opened, 'utf8').catch(() => '');
        if (!url) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect((await enter(url)).status).toBe(303);
    } finally {
      await dir.remove();
    }
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
