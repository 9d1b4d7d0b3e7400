import type { Browser } from 'playwright-core';

/** Where Debian installs Chromium. */
export const CHROMIUM_PATH: string;
/** True when Chromium is installed here. */
export function hasChromium(): boolean;
/** Launches headless Chromium through playwright-core. */
export function launchChromium(): Promise<Browser>;
