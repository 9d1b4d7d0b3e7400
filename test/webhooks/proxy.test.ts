import { afterEach, beforeEach, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProxy } from 'proxy';
import { useSandbox } from '../support/sandbox.js';
import { spawnListen, startTarget, trigger, type ListenProcess } from './helpers.js';

const ctx = useSandbox({ sandboxPerTest: true });
let target: Awaited<ReturnType<typeof startTarget>>;
let listen: ListenProcess | undefined;
const tunnels: string[] = [];
const proxyServer = createProxy(createServer());
proxyServer.on('connect', (req) => tunnels.push(req.url ?? ''));

beforeEach(async () => {
  target = await startTarget();
  await new Promise<void>((resolve) => proxyServer.listen(0, '127.0.0.1', resolve));
});
afterEach(async () => {
  listen?.child.kill('SIGKILL');
  await new Promise<void>((resolve) => proxyServer.close(() => resolve()));
  await target.close();
});

it('reaches the relay stream through HTTP_PROXY and forwards what arrives', async () => {
  const proxyUrl = `http://127.0.0.1:${(proxyServer.address() as AddressInfo).port}`;
  listen = spawnListen(['--app', ctx.sandbox.seed.app.id, '--forward-to', target.url], ctx.dir, {
    MKT_SITE_URL: ctx.sandbox.siteUrl,
    MKT_API_KEY: ctx.sandbox.seed.test_key,
    HTTP_PROXY: proxyUrl,
  });
  await listen.waitFor((lines) => lines.some((l) => l.type === 'ready'));
  const sent = await trigger(
    ctx.sandbox.siteUrl,
    ctx.sandbox.seed.test_key,
    ctx.sandbox.seed.app.id,
    'user.authorized',
  );
  await listen.waitFor((lines) => lines.some((l) => l.type === 'forwarded' && l.id === sent.delivery_id));
  expect(target.received.map((r) => r.headers['x-marketplace-delivery'])).toEqual([sent.delivery_id]);
  // The webhook secret request and the relay stream both went through the proxy's tunnel.
  expect(tunnels.length).toBeGreaterThanOrEqual(2);
  expect(new Set(tunnels)).toEqual(new Set([new URL(ctx.sandbox.siteUrl).host]));
});
