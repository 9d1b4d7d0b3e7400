import { mkdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_PATH, hasChromium, launchChromium } from '../support/chromium.js';
import { developerToken, useSandbox } from '../support/sandbox.js';
import { startServer, type TestServer } from '../support/server.js';

// The console driven as a developer would, in Debian's Chromium: sign in through the one-time link,
// create an app and a plan, add a test user, trigger an event, see its delivery and resend it, watch
// the request log — and check each step through the CLI. Screenshots of every page are written to
// SHOTS (artefacts, not committed); axe-core checks every page.

const SHOTS = join(tmpdir(), 'mkt-console-screenshots');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

if (!hasChromium())
  console.warn(
    `Skipping console browser tests: ${CHROMIUM_PATH} is not installed (apt-get install chromium).`,
  );

/** Serious or critical accessibility violations axe-core finds on the page, as "id: target" lines. */
async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const result = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run(): Promise<{
            violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }>;
          }>;
        };
      }
    ).axe;
    return axe.run();
  });
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

describe.skipIf(!hasChromium())('the developer console in Chromium', () => {
  let offsetMs = 0;
  const ctx = useSandbox({ now: () => Date.now() + offsetMs });
  let browser: Browser;
  let receiver: TestServer;
  let token: string;
  const shots: string[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    receiver = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks from the handler');
    });
    browser = await launchChromium();
    token = await developerToken(ctx.sandbox, ['apps:write']);
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    if (shots.length) console.log(`Console screenshots: ${SHOTS}`);
  });

  /** The developer's CLI against the sandbox. */
  const dev = (args: string[]) => ctx.mkt(args, { MKT_API_KEY: undefined, MKT_ACCESS_TOKEN: token });

  /** A fresh one-time link, as `mkt sandbox console` prints it off a terminal. */
  async function consoleLink(): Promise<string> {
    const r = await dev(['sandbox', 'console', '--no-browser']);
    expect(r.code, r.stderr).toBe(0);
    return r.stdout.trim();
  }

  async function shoot(page: Page, name: string): Promise<void> {
    const path = join(SHOTS, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
    shots.push(path);
    expect(await axeViolations(page), `axe on ${name}`).toEqual([]);
  }

  /** Submits a console form and waits for the page it leads to. */
  async function submit(page: Page, form: string): Promise<void> {
    await Promise.all([
      page.waitForLoadState('load'),
      page.locator(form).locator('button[type=submit]').first().click(),
    ]);
    await page.waitForLoadState('load');
  }

  it(
    'signs in once through the link, drives apps, plans, the simulator, deliveries and the log, and the CLI sees it all',
    { timeout: 180_000 },
    async () => {
      const link = await consoleLink();
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(link);
      expect(new URL(page.url()).pathname).toBe('/console');
      const cookies = await context.cookies();
      const cookie = cookies.find((c) => c.name.startsWith('mkt_console_'))!;
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });
      await shoot(page, '01-apps');

      // The same link a second time, in another browser: refused.
      const other = await browser.newContext();
      const second = await other.newPage();
      const replay = await second.goto(link);
      expect(replay?.status()).toBe(403);
      await expect(second.locator('h1').textContent()).resolves.toContain('does not work');
      await other.close();

      // Create an app: its client secret is shown this once.
      await page.fill('#create-app input[name=name]', 'Console <b>App</b>');
      await page.fill('#create-app textarea[name=redirect_uris]', 'http://127.0.0.1:4321/callback');
      await submit(page, '#create-app form');
      expect(page.url(), (await page.locator('main').textContent()) ?? '').toMatch(
        /\/console\/apps\/app_\w+$/,
      );
      const appId = /app_\w+/.exec(page.url())![0];
      await expect(page.locator('#revealed-secret code').textContent()).resolves.toMatch(/^cs_/);
      await expect(page.locator('h1').textContent()).resolves.toBe('Console <b>App</b>'); // escaped, shown as text
      await shoot(page, '02-app-overview');
      await page.reload();
      expect(await page.locator('#revealed-secret').count()).toBe(0); // never again
      const cliApp = JSON.parse((await dev(['apps', 'get', '--app', appId, '--json'])).stdout);
      expect(cliApp).toMatchObject({
        id: appId,
        name: 'Console <b>App</b>',
        redirect_uris: ['http://127.0.0.1:4321/callback'],
      });

      // Its webhook URL: the test's receiver.
      await page.fill('#settings input[name=webhook_url]', `${receiver.url}/hooks`);
      await submit(page, '#settings form');
      await expect(page.locator('#flash').textContent()).resolves.toContain('Saved');

      // A plan, priced exactly; the CLI sees the same minor units.
      await page.goto(`${ctx.sandbox.siteUrl}/console/apps/${appId}/plans`);
      await page.fill('#create-plan input[name=id]', 'free');
      await page.fill('#create-plan input[name=name]', 'Free');
      await page.fill('#create-plan input[name=features]', 'basic');
      await submit(page, '#create-plan form');
      await page.fill('#create-plan input[name=id]', 'pro');
      await page.fill('#create-plan input[name=name]', 'Pro');
      await page.selectOption('#create-plan select[name=kind]', 'monthly');
      await page.fill('#create-plan input[name=price]', '19.99');
      await submit(page, '#create-plan form');
      await expect(page.locator('#plan-pro').textContent()).resolves.toContain('19.99 USD');
      await shoot(page, '03-plans');
      const plans = JSON.parse((await dev(['plans', 'list', '--app', appId, '--json'])).stdout) as Array<{
        id: string;
        price: unknown;
      }>;
      expect(plans.find((p) => p.id === 'pro')?.price).toEqual({ amount: 1999, currency: 'USD' });

      // A test user on the free plan, then an event for them.
      await page.goto(`${ctx.sandbox.siteUrl}/console/apps/${appId}/simulator`);
      await page.selectOption('#add-user select[name=plan]', 'free');
      await page.fill('#add-user input[name=name]', 'Grace Tester');
      await page.selectOption('#add-user select[name=status]', 'active');
      await submit(page, '#add-user form');
      await expect(page.locator('#flash').textContent()).resolves.toContain('Added test user usr_');
      const userId = /usr_\w+/.exec((await page.locator('#flash').textContent())!)![0];
      if (await page.locator('#clock form').count()) {
        await submit(page, '#clock form');
        await expect(page.locator('#flash').textContent()).resolves.toContain('The business time is now');
      }
      await page.selectOption('#trigger select[name=event]', 'user.authorized');
      // A select of the test users where the sandbox lists them, else a field.
      if (await page.locator('#trigger select[name=user_id]').count())
        await page.selectOption('#trigger select[name=user_id]', userId);
      else await page.fill('#trigger input[name=user_id]', userId);
      await submit(page, '#trigger form');
      await expect(page.locator('#flash').textContent()).resolves.toMatch(
        /Sent user\.authorized as dlv_\w+: the webhook URL answered 200/,
      );
      await shoot(page, '04-simulator');
      await receiver.waitFor(1);

      // The delivery, its attempt and what the handler answered; resend it.
      await page.goto(`${ctx.sandbox.siteUrl}/console/apps/${appId}/deliveries`);
      await shoot(page, '05-deliveries');
      await page.locator('#deliveries a[href*="/deliveries/dlv_"]').first().click();
      await page.waitForLoadState('load');
      const deliveryId = /dlv_\w+/.exec(page.url())![0];
      await expect(page.locator('#attempts').textContent()).resolves.toContain('thanks from the handler');
      await submit(page, '#delivery form');
      await expect(page.locator('#flash').textContent()).resolves.toContain(`Resent ${deliveryId}: 200`);
      expect(await page.locator('#attempts tr.attempt').count()).toBe(2);
      await shoot(page, '06-delivery');
      const seen = await receiver.waitFor(2);
      expect(seen[1]!.headers['x-marketplace-delivery']).toBe(deliveryId);
      expect(seen[1]!.headers['x-marketplace-signature']).not.toBe(
        seen[0]!.headers['x-marketplace-signature'],
      );
      const fromCli = JSON.parse((await dev(['events', 'get', deliveryId, '--app', appId, '--json'])).stdout);
      expect(fromCli).toMatchObject({ id: deliveryId, state: 'succeeded' });
      expect(fromCli.attempts).toHaveLength(2);

      // The request log, live: a failing CLI request appears with the id the CLI printed.
      await page.goto(`${ctx.sandbox.siteUrl}/console/apps/${appId}/logs`);
      await page.locator('#live-status', { hasText: /^Live/ }).waitFor();
      const failed = await dev(['plans', 'get', 'no-such-plan', '--app', appId]);
      const requestId = /Request ID: (req_\w+)/.exec(failed.stderr)![1]!;
      await page.locator(`[id="${requestId}"]`).waitFor();
      await expect(page.locator(`[id="${requestId}"]`).textContent()).resolves.toContain('404');
      await shoot(page, '07-request-log');

      for (const [tab, name] of [
        ['keys', '08-keys'],
        ['preview', '09-preview'],
      ] as const) {
        await page.goto(`${ctx.sandbox.siteUrl}/console/apps/${appId}/${tab}`);
        await shoot(page, name);
      }
      await context.close();
    },
  );

  it('refuses a form without its token, a replayed token, another origin and a foreign Host', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(await consoleLink());
    const appId = ctx.sandbox.seed.app.id;
    await page.goto(`${ctx.sandbox.siteUrl}/console/apps/${appId}/keys`);
    const before = (await page.locator('#keys tbody tr').count()) as number;
    const action = `${ctx.sandbox.siteUrl}/console/apps/${appId}/keys`;
    const csrf = await page.locator('#create-key input[name=csrf]').inputValue();

    const missing = await page.request.post(action, { form: { mode: 'test' }, maxRedirects: 0 });
    expect(missing.status()).toBe(403);
    const foreign = await page.request.post(action, {
      form: { mode: 'test', csrf },
      headers: { origin: 'http://evil.example' },
      maxRedirects: 0,
    });
    expect(foreign.status()).toBe(403);
    const first = await page.request.post(action, { form: { mode: 'test', csrf }, maxRedirects: 0 });
    expect(first.status()).toBe(303);
    const replayed = await page.request.post(action, { form: { mode: 'test', csrf }, maxRedirects: 0 });
    expect(replayed.status()).toBe(403);
    await page.reload();
    expect(await page.locator('#keys tbody tr').count()).toBe(before + 1); // the one accepted form only

    // DNS rebinding: the sandbox's address under another name.
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${ctx.sandbox.siteUrl}/console`,
        { headers: { host: `evil.example:${ctx.sandbox.port}` } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(421);
    await context.close();
  });

  it('refuses a link older than 5 minutes, and works without JavaScript', async () => {
    const stale = await consoleLink();
    offsetMs += 5 * 60_000 + 1_000;
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    expect((await page.goto(stale))?.status()).toBe(403);
    expect((await page.goto(await consoleLink()))?.status()).toBe(200);
    await page.goto(`${ctx.sandbox.siteUrl}/console/apps/${ctx.sandbox.seed.app.id}/logs`);
    expect(await page.locator('#log-rows tr').count()).toBeGreaterThan(0); // rendered by the server
    await context.close();
  });
});
