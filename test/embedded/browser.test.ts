import type { Browser } from 'playwright-core';
import { jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_PATH, hasChromium, launchChromium } from '../support/chromium.js';
import { useSandbox } from '../support/sandbox.js';
import { startServer, type TestServer } from '../support/server.js';

if (!hasChromium())
  console.warn(`Skipping browser tests: ${CHROMIUM_PATH} is not installed (apt-get install chromium).`);

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

describe.skipIf(!hasChromium())('an embedded app end to end (Chromium)', () => {
  const ctx = useSandbox();
  let browser: Browser;
  let page: TestServer;

  beforeAll(async () => {
    // The developer's embedded page: its server trusts the user only from a token jose verifies.
    page = await startServer((req, res) => {
      const token = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams.get('context_token') ?? '';
      const { client_id, client_secret } = ctx.sandbox.seed.app;
      jwtVerify(token, new TextEncoder().encode(client_secret), {
        algorithms: ['HS256'],
        issuer: ctx.sandbox.siteUrl,
        audience: client_id,
        requiredClaims: ['sub', 'app_id', 'iat', 'nbf', 'exp', 'jti'],
      }).then(
        ({ payload }) => {
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end(`<p>Hello <span id="user">${escape(String(payload.sub))}</span></p>`);
        },
        (err: Error) => {
          res.writeHead(401, { 'content-type': 'text/html' });
          res.end(`<p id="refused">${escape(err.message)}</p>`);
        },
      );
    });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await page?.close();
  });

  it('the preview URL frames the page, whose server verifies the token with jose and shows the user', async () => {
    const set = await ctx.mkt(['apps', 'update', '--embed-url', `http://127.0.0.1:${page.port}/embed`]);
    expect(set.code, set.stderr).toBe(0);
    const user = ctx.sandbox.seed.users[1]!.id;
    const preview = await ctx.mkt(['apps', 'preview', '--user', user, '--json']);
    expect(preview.code, preview.stderr).toBe(0);
    const { url } = JSON.parse(preview.stdout) as { url: string };

    const tab = await browser.newPage();
    const response = await tab.goto(url);
    // Framed by the console's Preview and no other site: CSP frame-ancestors 'self', not X-Frame-Options.
    expect(response!.headers()['x-frame-options']).toBeUndefined();
    expect(response!.headers()['content-security-policy']).toMatch(/frame-src .*frame-ancestors 'self'/);
    expect(await tab.getAttribute('#app-frame', 'sandbox')).toMatch(/allow-scripts/);
    const frame = tab.frameLocator('#app-frame');
    await expect.poll(() => frame.locator('#user, #refused').first().textContent()).toBe(user);

    // The token the page received passes mkt's verifier too, framed URL and all.
    const src = (await tab.getAttribute('#app-frame', 'src'))!;
    const verified = await ctx.mkt(['apps', 'verify-context-token', src, '--json'], {
      MKT_CLIENT_SECRET: ctx.sandbox.seed.app.client_secret,
    });
    expect(verified.code, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout).claims).toMatchObject({ sub: user, app_id: ctx.sandbox.seed.app.id });
    await tab.close();
  });
});
