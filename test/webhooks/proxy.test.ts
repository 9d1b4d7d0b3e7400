import { afterEach, beforeEach, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProxy } from 'proxy';
import { tempDir } from '../support/cli.js';
import { startTestSandbox } from '../support/sandbox.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { spawnListen, startTarget, trigger, type ListenProcess } from './helpers.js';

let sandbox: Sandbox;
let dir: { path: string; remove(): Promise<void> };
let target: Awaited<ReturnType<typeof startTarget>>;
let listen: ListenProcess | undefined;
const tunnels: string[] = [];
const proxyServer = createProxy(createServer());
proxyServer.on('connect', (req) => tunnels.push(req.url ?? ''));

beforeEach(async () => {
  sandbox = await startTestSandbox();
  dir = await tempDir();
  target = await startTarget();
  await new Promise<void>((resolve) => proxyServer.listen(0, '127.0.0.1', resolve));
});
afterEach(async () => {
  listen?.child.kill('SIGKILL');
  await new Promise<void>((resolve) => proxyServer.close(() => resolve()));
  await target.close();
  await sandbox.close();
  await dir.remove();
});

it('reaches the relay stream through HTTP_PROXY and forwards what arrives', async () => {
  const proxyUrl = `http://127.0.0.1:${(proxyServer.address() as AddressInfo).port}`;
  listen = spawnListen(['--app', sandbox.seed.app.id, '--forward-to', target.url], dir.path, {
    MKT_SITE_URL: sandbox.siteUrl,
    MKT_API_KEY: sandbox.seed.test_key,
    HTTP_PROXY: proxyUrl,
  });
  await listen.waitFor((lines) => lines.some((l) => l.type === 'ready'));
  const sent = await trigger(sandbox.siteUrl, sandbox.seed.test_key, sandbox.seed.app.id, 'user.authorized');
  await listen.waitFor((lines) => lines.some((l) => l.type === 'forwarded' && l.id === sent.delivery_id));
  expect(target.received.map((r) => r.headers['x-marketplace-delivery'])).toEqual([sent.delivery_id]);
  // The webhook secret request and the relay stream both went through the proxy's tunnel.
  expect(tunnels.length).toBeGreaterThanOrEqual(2);
  expect(new Set(tunnels)).toEqual(new Set([new URL(sandbox.siteUrl).host]));
});
