import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { MAX_PER_DESTINATION } from '../../src/sandbox/kernel/deliveries/dispatcher.js';
import { developerToken, startTestSandbox } from '../support/sandbox.js';
import { failFirstAttempt, type TestServer } from '../support/server.js';
import { call } from './helpers.js';

// One slow receiver never delays another's deliveries (docs/DECISIONS.md, delivery concurrency):
// background deliveries (retries, the clock's events) share 8 places, of which one webhook URL holds
// at most MAX_PER_DESTINATION. App B's URL hangs on every retry; app A's retry still arrives while B's
// requests are all still hanging, and once B answers, none of its deliveries is lost.

let sb: Sandbox | undefined;
const servers: TestServer[] = [];
afterEach(async () => {
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

describe('delivery places per destination', () => {
  it("app A's retry arrives while app B's URL hangs on all of its own; B loses nothing", async () => {
    // A minute per attempt: on the old shared queue, A's retry would wait for B's timeouts.
    sb = await startTestSandbox({ deliveryTimeoutMs: 60_000, deliveryBackoffMs: [20, 20, 20] });
    const token = await developerToken(sb, ['apps:write']);
    const hanging: ServerResponse[] = [];
    let hangingB = true;
    const b = await receiver((res) => (hangingB ? hanging.push(res) : res.writeHead(200).end()));
    const a = await receiver((res) => res.writeHead(200).end());
    const appB = await call(sb, 'POST', '/api/v1/apps', { token, body: { name: 'B', webhook_url: b.url } });
    expect(appB.status).toBe(201);
    const patched = await call(sb, 'PATCH', `/api/v1/apps/${sb.seed.app.id}`, {
      token,
      body: { webhook_url: a.url },
    });
    expect(patched.status).toBe(200);
    const simulate = (appId: string) =>
      call(sb!, 'POST', '/api/v1/simulator/events', {
        token,
        body: { app_id: appId, event: 'user.revoked', synthetic: true },
      });

    // Ten deliveries of B: each first attempt fails, each retry hangs (more than all 8 places).
    const bIds: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await simulate(appB.json.id);
      expect(res.json.webhook.response_status).toBe(500);
      bIds.push(res.json.delivery_id);
    }
    await b.waitFor(10 + MAX_PER_DESTINATION, 10_000);
    expect(hanging).toHaveLength(MAX_PER_DESTINATION);

    // A's delivery fails once too; its retry goes to A through a free place.
    const fromA = await simulate(sb.seed.app.id);
    expect(fromA.json.webhook.response_status).toBe(500);
    const seen = await a.waitFor(2, 20_000);
    expect(seen.map((s) => s.headers['x-marketplace-delivery'])).toEqual([
      fromA.json.delivery_id,
      fromA.json.delivery_id,
    ]);
    // Meanwhile B's retries were all still hanging, none answered, none given up.
    expect(hanging.filter((res) => !res.writableEnded && !res.destroyed)).toHaveLength(MAX_PER_DESTINATION);

    // B comes back: what hung is answered, the rest of its retries follow; every delivery arrives.
    hangingB = false;
    for (const res of hanging.splice(0)) res.writeHead(200).end();
    await b.waitFor(20, 20_000);
    const tries = (id: string) => b.seen.filter((s) => s.headers['x-marketplace-delivery'] === id).length;
    expect(bIds.map(tries)).toEqual(bIds.map(() => 2));
    for (const id of bIds) {
      let delivered = false;
      for (let i = 0; !delivered && i < 100; i++) {
        const d = await call(sb, 'GET', `/api/v1/apps/${appB.json.id}/deliveries/${id}`, { token });
        delivered = d.json.state === 'succeeded';
        if (!delivered) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(delivered, id).toBe(true);
    }
  }, 60_000);
});
