// Debian's Chromium for the browser tests, started the one way that works on these machines:
// headless, and without the background networking that a closed network refuses.
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

/** Where Debian installs Chromium (`apt-get install chromium`; CI installs it). */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** True when Chromium is installed here. */
export const hasChromium = () => existsSync(CHROMIUM_PATH);

/** Launches headless Chromium through playwright-core (no browser download). */
export function launchChromium() {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
