import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium } from '../support/chromium.js';
import { useSandbox } from '../support/sandbox.js';
import { startServer, type TestServer } from '../support/server.js';

// A context token reaches only a session that may see it (docs/DECISIONS.md §9, "Who sees a context
// token"): the console's Preview and the link `mkt apps preview` prints, each carrying a preview pass.
// The dashboard page may be framed by the sandbox's own pages (the console) and nobody else.

const SHOTS = join(tmpdir(), 'mkt-console-screenshots');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const ctx = useSandbox();
let embed: TestServer;
const app = () => ctx.sandbox.seed.app;
const user = () => ctx.sandbox.seed.users[0]!.id;

/** A preview link from the API, as `mkt apps preview` gets it. */
async function previewLink(appId: string, key: string, userId?: string): Promise<string> {
  const res = await fetch(`${ctx.sandbox.siteUrl}/api/v1/apps/${appId}/preview-links`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(userId ? { user_id: userId } : {}),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { url: string }).url;
}

beforeAll(async () => {
  embed = await startServer((_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<!doctype html><title>Embedded</title><p id="hello">Hello from the app</p>');
  });
  const set = await fetch(`${ctx.sandbox.siteUrl}/api/v1/apps/${app().id}`, {
    method: 'PATCH',
    headers: { 'x-api-key': ctx.sandbox.seed.test_key, 'content-type': 'application/json' },
    body: JSON.stringify({ embed_url: `${embed.url}/embed` }),
  });
  expect(set.status).toBe(200);
});
afterAll(async () => {
  await embed?.close();
});

describe('who sees a context token', () => {
  it('an anonymous local caller gets no token, no page and no user list', async () => {
    for (const query of [`?user_id=${user()}`, '', `?user_id=${user()}&preview=guess`]) {
      const res = await fetch(`${ctx.sandbox.siteUrl}/dashboard/apps/${app().id}${query}`);
      const html = await res.text();
      expect([query, res.status]).toEqual([query, 404]);
      expect(html).not.toContain('context_token');
      expect(html).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+/);
      expect(html).not.toContain(user());
      expect(html).toContain('mkt apps preview');
    }
  });

  it('the link from the API shows the app with a token; a pass opens its own app only', async () => {
    const link = await previewLink(app().id, ctx.sandbox.seed.test_key, user());
    const res = await fetch(link);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/context_token=eyJ/);
    // The same pass on another app of the same sandbox: absent.
    const elsewhere = await fetch(link.replace(app().id, 'app_0000000000000000'));
    expect(elsewhere.status).toBe(404);
    // Without a user it lists the users, with links that keep the pass.
    const picker = await (await fetch(link.replace(/&user_id=.*$/, ''))).text();
    const pass = new URL(link).searchParams.get('preview')!;
    expect(picker).toContain(`?preview=${pass}&amp;user_id=${user()}`);
  });

  it('the dashboard page may be framed by the sandbox itself and nobody else; consent never', async () => {
    const res = await fetch(await previewLink(app().id, ctx.sandbox.seed.test_key, user()));
    await res.text();
    expect(res.headers.get('x-frame-options')).toBeNull();
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'self'");
    const consent = await fetch(`${ctx.sandbox.siteUrl}/`);
    await consent.text();
    expect(consent.headers.get('x-frame-options')).toBe('DENY');
    expect(consent.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });
});

describe.skipIf(!hasChromium())('the console’s Preview in Chromium', () => {
  it(
    'renders the dashboard in its frame, and the embedded page receives its request with a token',
    { timeout: 60_000 },
    async () => {
      mkdirSync(SHOTS, { recursive: true });
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        await page.goto((await ctx.sandbox.consoleLink()).url);
        const before = embed.seen.length;
        await page.goto(`${ctx.sandbox.siteUrl}/console/apps/${app().id}/preview?user_id=${user()}`);
        const dashboard = page.frameLocator('iframe.preview');
        await expect
          .poll(async () => dashboard.frameLocator('#app-frame').locator('#hello').textContent(), {
            timeout: 15_000,
          })
          .toBe('Hello from the app');
        const seen = embed.seen.slice(before).map((r) => new URL(r.url, embed.url));
        expect(
          seen.some((u) => u.pathname === '/embed' && u.searchParams.get('context_token')?.startsWith('eyJ')),
        ).toBe(true);
        await page.screenshot({ path: join(SHOTS, 'preview-frame.png'), fullPage: true });
        expect(await axeViolations(page)).toEqual([]);
      } finally {
        await browser.close();
      }
    },
  );
});

/** Serious or critical accessibility violations axe-core finds on the page. */
async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const result = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run(): Promise<{ violations: Array<{ id: string; impact: string }> }> };
      }
    ).axe;
    return axe.run();
  });
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
}
