import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { SandboxSeed } from '../../src/sandbox/start-sandbox.js';
import { runMkt, tempDir } from '../support/cli.js';
import { killAllSandboxProcesses, startSandboxProcess } from '../support/sandbox.js';

let dir: { path: string; remove(): Promise<void> };
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  killAllSandboxProcesses();
  await dir.remove();
});

describe('mkt sandbox start', () => {
  it('prints the site and the seed, serves the API, stops cleanly on Ctrl-C and keeps its state', async () => {
    const data = join(dir.path, 'sandbox');
    const first = await startSandboxProcess(data, dir.path);
    const info = first.info as unknown as SandboxSeed & { site_url: string };
    expect(info.site_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // Each thing is named once, in snake_case.
    expect(Object.keys(info).filter((k) => /[A-Z]/.test(k))).toEqual([]);
    expect(info.test_key).toMatch(/^test_/);
    expect(info.live_key).toMatch(/^live_/);
    expect(info.app.client_secret).toBeTruthy();
    expect(info.app.webhook_secret).toMatch(/^whsec_/);
    expect(info.plans.map((p) => p.id)).toEqual(expect.arrayContaining(['free', 'pro-monthly']));
    expect(info.users.length).toBeGreaterThanOrEqual(2);

    const whoami = await runMkt(['whoami', '--json'], dir.path, {
      env: { MKT_SITE_URL: info.site_url, MKT_API_KEY: info.test_key },
    });
    expect(whoami.code).toBe(0);
    expect(JSON.parse(whoami.stdout).id).toBe(info.developer.id);

    expect(await first.stop('SIGINT')).toBe(130);
    expect(first.stderr()).toContain('Stopped.');

    const again = await startSandboxProcess(data, dir.path);
    expect(again.seed.app.client_id).toBe(info.app.client_id);
    expect(again.seed.test_key).toBe(info.test_key);
    expect(await again.stop('SIGTERM')).toBe(143);

    const reset = await startSandboxProcess(data, dir.path, { args: ['--reset'] });
    expect(reset.seed.app.client_id).not.toBe(info.app.client_id);
    await reset.stop('SIGTERM');
  });

  it('says clearly when the port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const r = await runMkt(
        ['sandbox', 'start', '--port', String(port), '--data-dir', join(dir.path, 's')],
        dir.path,
        {
          timeoutMs: 20_000,
        },
      );
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`Port ${port} on 127.0.0.1 is already in use`);
      expect(r.stderr).toContain('mkt sandbox start --port 0');
    } finally {
      blocker.close();
    }
  });
});
