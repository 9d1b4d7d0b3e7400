// The setup every listen*.test.ts file shares: a sandbox per test (not useSandbox: one test restarts
// it on the same folder and port), the listen fixture, and the helpers that drive `mkt webhooks listen`.
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { startTestSandbox } from '../support/sandbox.js';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { spawnListen, trigger, type ListenProcess, useListenFixture } from './helpers.js';

/** Sets up a file's tests; `sandbox` may be replaced by a test (a restart). */
export function useListenContext() {
  const t = {
    sandbox: undefined as unknown as Sandbox,
    fx: useListenFixture(),
    env: () => ({ MKT_SITE_URL: t.sandbox.siteUrl, MKT_API_KEY: t.sandbox.seed.test_key }),
    app: () => t.sandbox.seed.app.id,
    listen(extra: string[] = [], options: { json?: boolean } = {}): ListenProcess {
      const l = spawnListen(
        [
          '--app',
          t.app(),
          '--forward-to',
          t.fx.target.url,
          '--forward-backoff',
          '50',
          '--forward-tries',
          '10',
          ...extra,
        ],
        t.fx.dir,
        t.env(),
        options,
      );
      t.fx.running.push(l);
      return l;
    },
    ready: (l: ListenProcess) => l.waitFor((lines) => lines.some((x) => x.type === 'ready')),
    send: async (event: string) =>
      (await trigger(t.sandbox.siteUrl, t.sandbox.seed.test_key, t.app(), event)).delivery_id,
    journalFolder: () => join(t.fx.dir, 'data', 'webhooks', t.app()),
    lockFile: () => join(t.journalFolder(), 'listen.lock'),
    exists: (path: string) =>
      access(path).then(
        () => true,
        () => false,
      ),
    forwardedIds: (l: ListenProcess) => l.lines.filter((x) => x.type === 'forwarded').map((x) => x.id),
    /** Delivery ids the target accepted (answered 2xx), in arrival order. */
    accepted: () =>
      t.fx.target.received
        .filter((r) => r.answered === 200)
        .map((r) => String(r.headers['x-marketplace-delivery'])),
  };
  beforeEach(async () => {
    t.sandbox = await startTestSandbox();
  });
  afterEach(() => t.sandbox.close());
  return t;
}
