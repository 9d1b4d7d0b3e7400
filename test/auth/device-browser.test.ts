import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { startMkt } from '../support/cli.js';
import { hasChromium, launchChromium } from '../support/chromium.js';
import { useSandbox } from '../support/sandbox.js';
import { fastClock, USER_CODE } from './device-helpers.js';

// The device sign-in's verification page in Debian's Chromium, as a person on their phone or laptop
// uses it: the address mkt printed, the code typed in, the user chosen, Approve. Every page is
// checked with axe-core and screenshotted to SHOTS (artefacts, not committed).

const SHOTS = join(tmpdir(), 'mkt-device-screenshots');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

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

describe.skipIf(!hasChromium())('the device verification page in Chromium', () => {
  const SPEED = 11;
  const origin = Date.now();
  const ctx = useSandbox({ now: () => origin + (Date.now() - origin) * SPEED });

  it('takes the typed code, shows it beside the consent, and signs mkt in on Approve', async () => {
    mkdirSync(SHOTS, { recursive: true });
    const fred = ctx.sandbox.seed.users.find((u) => u.plan === 'free')!;
    const mkt = startMkt(['login', '--device', '--client-id', ctx.sandbox.seed.app.client_id], ctx.dir, {
      env: {
        MKT_SITE_URL: ctx.sandbox.siteUrl,
        MKT_CLIENT_SECRET: ctx.sandbox.seed.app.client_secret,
        ...fastClock(10),
      },
      timeoutMs: 60_000,
    });
    const browser = await launchChromium();
    try {
      const [, code] = await mkt.waitForStderr(USER_CODE);
      const page = await browser.newPage();
      const shoot = async (name: string) => {
        await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
        expect(await axeViolations(page), `axe on ${name}`).toEqual([]);
      };
      await page.goto(`${ctx.sandbox.siteUrl}/oauth/device`);
      await shoot('1-enter-code');
      // People type codes in lower case, without the dash.
      await page.getByLabel('Code shown on your device').fill(code!.toLowerCase().replace('-', ''));
      await Promise.all([
        page.waitForURL(/user_code=/),
        page.getByRole('button', { name: 'Continue' }).click(),
      ]);
      expect(await page.locator('#user-code').textContent()).toBe(code);
      await shoot('2-consent-with-code');
      await page.getByLabel('Sign in as').selectOption(fred.id);
      await Promise.all([
        page.waitForLoadState('load'),
        page.getByRole('button', { name: 'Approve' }).click(),
      ]);
      await page.waitForSelector('#outcome');
      expect(await page.locator('h1').textContent()).toBe('Device signed in');
      await shoot('3-done');
      expect((await mkt.exit()).code, mkt.stderr()).toBe(0);
      expect(mkt.stderr()).toContain(`✓ Logged in as ${fred.name}`);

      await page.goto(`${ctx.sandbox.siteUrl}/oauth/device?user_code=${encodeURIComponent(code!)}`);
      expect(await page.locator('[role=alert]').textContent()).toContain('unknown, already used or expired');
      await shoot('4-spent-code');
    } finally {
      mkt.child.kill('SIGKILL');
      await browser.close();
    }
  }, 90_000);
});
