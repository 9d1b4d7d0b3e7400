import type { Browser } from 'playwright-core';
import { CHROMIUM_PATH, hasChromium, launchChromium } from '../support/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMkt, tempDir } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';
import { call } from './helpers.js';
import { startServer, type TestServer } from '../support/server.js';

if (!hasChromium())
  console.warn(`Skipping browser tests: ${CHROMIUM_PATH} is not installed (apt-get install chromium).`);

describe.skipIf(!hasChromium())('consent page in a real browser (Chromium)', () => {
  const ctx = useSandbox();
  let browser: Browser;
  let callback: TestServer;
  const seen: URL[] = [];

  beforeAll(async () => {
    callback = await startServer((req, res) => {
      seen.push(new URL(req.url ?? '/', callback.url));
      res.writeHead(200, { 'content-type': 'text/html' }).end('<p id="done">You can close this tab.</p>');
    });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await callback?.close();
  });

  /** Opens the consent page for `scope` in a new tab; Approve leads to the loopback callback. */
  async function consentPage(scope: string, state: string) {
    const page = await browser.newPage();
    const query = new URLSearchParams({
      client_id: ctx.sandbox.seed.app.client_id,
      redirect_uri: `http://127.0.0.1:${callback.port}/callback`,
      response_type: 'code',
      scope,
      state,
    });
    await page.goto(`${ctx.sandbox.siteUrl}/oauth/authorize?${query}`);
    return page;
  }

  /** Exchanges the code the callback received with `state`. */
  function exchange(state: string) {
    const url = seen.findLast((u) => u.searchParams.get('state') === state)!;
    return call(ctx.sandbox, 'POST', '/api/oauth/token', {
      body: {
        grant_type: 'authorization_code',
        code: url.searchParams.get('code'),
        client_id: ctx.sandbox.seed.app.client_id,
        client_secret: ctx.sandbox.seed.app.client_secret,
        redirect_uri: `http://127.0.0.1:${callback.port}/callback`,
      },
    });
  }

  it('approving redirects to the loopback callback with a code that exchanges for tokens', async () => {
    const page = await consentPage('identity:read', 'browser-state');
    expect(await page.textContent('#app-name')).toBe('Sandbox App');
    await page.selectOption('select[name="user_id"]', ctx.sandbox.seed.users[1]!.id);
    await Promise.all([page.waitForURL(/\/callback\?/), page.click('button[value="approve"]')]);
    expect(await page.textContent('#done')).toContain('close this tab');
    const url = seen.find((u) => u.pathname === '/callback')!;
    expect(url.pathname).toBe('/callback');
    expect(url.searchParams.get('state')).toBe('browser-state');
    const token = await exchange('browser-state');
    expect(token.status).toBe(200);
    const me = await call(ctx.sandbox, 'GET', '/api/v1/whoami', { token: token.json.access_token });
    expect(me.json.id).toBe(ctx.sandbox.seed.users[1]!.id);
    await page.close();
  });

  it('shows who is who; with apps:write the developer is preselected and Approve lets mkt apps list work', async () => {
    const page = await consentPage('identity:read entitlements:read apps:write', 'manage');
    const option = (id: string) => page.locator(`select[name="user_id"] option[value="${id}"]`).textContent();
    expect(await option(ctx.sandbox.seed.developer.id)).toContain('developer, owner of Sandbox App');
    expect(await option(ctx.sandbox.seed.users[0]!.id)).toContain('test user, pro-monthly, active');
    expect(await option(ctx.sandbox.seed.users[2]!.id)).toContain('test user, pro-monthly, past_due');
    expect(await page.inputValue('select[name="user_id"]')).toBe(ctx.sandbox.seed.developer.id);
    // Approve with the defaults.
    await Promise.all([page.waitForURL(/\/callback\?/), page.click('button[value="approve"]')]);
    await page.close();
    const token = await exchange('manage');
    expect(token.json.scope).toBe('identity:read entitlements:read apps:write');
    const dir = await tempDir();
    try {
      const list = await runMkt(['apps', 'list', '--json'], dir.path, {
        env: { MKT_SITE_URL: ctx.sandbox.siteUrl, MKT_ACCESS_TOKEN: token.json.access_token },
      });
      expect(list.stderr).toBe('');
      expect(JSON.parse(list.stdout).map((a: { id: string }) => a.id)).toContain(ctx.sandbox.seed.app.id);
    } finally {
      await dir.remove();
    }
  });

  it('shows the embedded app in an iframe with the auth context', async () => {
    const embedUrl = `http://127.0.0.1:${callback.port}/embed`;
    await call(ctx.sandbox, 'PATCH', `/api/v1/apps/${ctx.sandbox.seed.app.id}`, {
      key: ctx.sandbox.seed.test_key,
      body: { embed_url: embedUrl },
    });
    const link = await call(ctx.sandbox, 'POST', `/api/v1/apps/${ctx.sandbox.seed.app.id}/preview-links`, {
      key: ctx.sandbox.seed.test_key,
      body: { user_id: ctx.sandbox.seed.users[0]!.id },
    });
    const page = await browser.newPage();
    await page.goto(link.json.url as string);
    const frame = page.frameLocator('#app-frame');
    await expect.poll(async () => frame.locator('#done').textContent()).toContain('close this tab');
    const src = new URL((await page.getAttribute('#app-frame', 'src'))!);
    expect(src.searchParams.get('user_id')).toBe(ctx.sandbox.seed.users[0]!.id);
    expect(src.searchParams.get('app_id')).toBe(ctx.sandbox.seed.app.id);
    expect(src.searchParams.get('context_token')).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    await page.close();
  });
});
