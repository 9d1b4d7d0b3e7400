// Small checks `mkt dev` makes of what is around the app: the site, the port, and whether the
// project's .env still holds the app's webhook secret.
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Deps } from '../deps.js';

/** Whether the marketplace answers at `siteUrl`. */
export function siteAnswers(siteUrl: string): Promise<boolean> {
  return fetch(`${siteUrl}/.well-known/oauth-authorization-server`, {
    signal: AbortSignal.timeout(2_000),
  }).then(
    async (res) => (await res.body?.cancel(), res.ok),
    () => false,
  );
}

/** Asks `check` every 250 ms until it says yes (true), `ms` pass or `signal` aborts (false). */
export async function waitUntil(
  check: () => Promise<boolean>,
  ms: number,
  signal: AbortSignal,
): Promise<boolean> {
  const end = Date.now() + ms;
  while (!signal.aborted && Date.now() < end) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

/** Whether something already listens on localhost:port (the app would fail to start, or worse, be another). */
export function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: 'localhost' });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** The value of `name` in the .env file at `path` (as `NAME=value` or `NAME="value"`), if any. */
export function envValue(text: string, name: string): string | undefined {
  const line = text.split(/\r?\n/).find((l) => l.startsWith(`${name}=`));
  const value = line?.slice(name.length + 1).trim();
  return value?.replace(/^"(.*)"$/, '$1');
}

/**
 * Warns when the project's .env holds another webhook secret than the app's current one (rotated
 * since): every delivery would then fail the app's signature check.
 */
export async function checkEnvSecret(deps: Deps, dir: string, appId: string): Promise<void> {
  const { readFile } = await import('node:fs/promises');
  const text = await readFile(join(dir, '.env'), 'utf8').catch(() => undefined);
  const inFile = text === undefined ? undefined : envValue(text, 'MKT_WEBHOOK_SECRET');
  if (inFile === undefined) return;
  const { fetchWebhookSecret } = await import('../webhooks/secret.js');
  const current = await fetchWebhookSecret(deps, appId).catch(() => undefined);
  if (current === undefined || current === inFile) return;
  deps.out.warn(
    `.env's MKT_WEBHOOK_SECRET is not the current webhook secret of ${appId} (rotated since?): the app would refuse every delivery ("bad signature").`,
  );
  deps.out.info(
    `  Put the current one in .env:  mkt webhooks listen --app ${appId} --print-secret   (prints it; set MKT_WEBHOOK_SECRET=… in .env)`,
  );
}
