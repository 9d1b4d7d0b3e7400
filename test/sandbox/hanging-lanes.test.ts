import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { MAX_PER_DESTINATION } from '../../src/sandbox/kernel/deliveries/dispatcher.js';
import { developerToken, startTestSandbox } from '../support/sandbox.js';
import { failFirstAttempt, type TestServer } from '../support/server.js';
import { call } from './helpers.js';

// Several apps whose webhook URLs never answer hold every shared delivery place; another app's retry
// still goes within 2 s, through the lane each app has of its own (docs/DECISIONS.md, delivery
// concurrency). Measured with 2 and 8 hanging apps, 16 events each (BENCHMARKS.md).

let sb: Sandbox | undefined;
const servers: TestServer[] = [];
const hanging: ServerResponse[] = [];
afterEach(async () => {
  for (const res of hanging.splice(0)) res.destroy();
  await sb?.close();
  sb = undefined;
  for (const s of servers.splice(0)) await s.close();
});

/** A receiver of the suite's (failFirstAttempt), closed after each test. */
async function receiver(onRetry: (res: ServerResponse) => void): Promise<TestServer> {
  const server = await failFirstAttempt(onRetry);
  servers.push(server);
  return server;
}

const BACKOFF_MS = 300;

describe('a lane per app', () => {
  for (const apps of [2, 8]) {
    it(`delivers another app's retry within 2 s behind ${apps} hanging URLs`, async () => {
      sb = await startTestSandbox({ deliveryTimeoutMs: 60_000, deliveryBackoffMs: [BACKOFF_MS, BACKOFF_MS] });
      const token = await developerToken(sb, ['apps:write']);
      const simulate = (appId: string) =>
        call(sb!, 'POST', '/api/v1/simulator/events', {
          token,
          body: { app_id: appId, event: 'user.revoked', synthetic: true },
        });
      const hangs: TestServer[] = [];
      for (let n = 0; n < apps; n++) {
        const server = await receiver((res) => hanging.push(res));
        const app = await call(sb, 'POST', '/api/v1/apps', {
          token,
          body: { name: `H${n}`, webhook_url: server.url },
        });
        expect(app.status).toBe(201);
        for (let i = 0; i < 16; i++) expect((await simulate(app.json.id)).status).toBe(201);
        hangs.push(server);
      }
      // Every hanging URL holds what it may: all eight shared places are taken.
      await Promise.all(hangs.map((s) => s.waitFor(16 + Math.min(MAX_PER_DESTINATION, 8 / apps), 20_000)));
      expect(hanging.length).toBeGreaterThanOrEqual(8);

      const a = await receiver((res) => res.writeHead(200).end());
      const patched = await call(sb, 'PATCH', `/api/v1/apps/${sb.seed.app.id}`, {
        token,
        body: { webhook_url: a.url },
      });
      expect(patched.status).toBe(200);
      const failed = await simulate(sb.seed.app.id);
      expect(failed.json.webhook.response_status).toBe(500);
      const due = Date.now() + BACKOFF_MS;
      await a.waitFor(2, 20_000);
      const late = Date.now() - due;
      console.log(`retry of another app behind ${apps} hanging URLs: ${late} ms late`);
      expect(late).toBeLessThan(2_000);
    }, 90_000);
  }
});
