import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { SandboxSeed } from '../../src/sandbox/index.js';
import { MKT_BIN, baseEnv, runMkt, tempDir } from '../support/cli.js';

let dir: { path: string; remove(): Promise<void> };
const children: ChildProcess[] = [];
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  await dir.remove();
});

interface Started {
  child: ChildProcess;
  info: SandboxSeed & { site_url: string; data_dir: string };
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Starts `mkt sandbox start --json` and waits for its JSON document. */
function startSandboxCommand(args: string[]): Promise<Started> {
  const child = spawn(process.execPath, [MKT_BIN, 'sandbox', 'start', '--json', '--port', '0', ...args], {
    env: baseEnv(dir.path),
    stdio: 'pipe',
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      try {
        resolve({ child, info: JSON.parse(stdout), stderr: () => stderr, exited });
      } catch {
        // the document is not complete yet
      }
    });
    void exited.then((code) => reject(new Error(`sandbox exited ${code}: ${stderr}`)));
  });
}

describe('mkt sandbox start', () => {
  it('prints the site and the seed, serves the API, stops cleanly on Ctrl-C and keeps its state', async () => {
    const data = join(dir.path, 'sandbox');
    const first = await startSandboxCommand(['--data-dir', data]);
    const { info } = first;
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

    first.child.kill('SIGINT');
    expect(await first.exited).toBe(130);
    expect(first.stderr()).toContain('Stopped.');

    const again = await startSandboxCommand(['--data-dir', data]);
    expect(again.info.app.client_id).toBe(info.app.client_id);
    expect(again.info.test_key).toBe(info.test_key);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);

    const reset = await startSandboxCommand(['--data-dir', data, '--reset']);
    expect(reset.info.app.client_id).not.toBe(info.app.client_id);
    reset.child.kill('SIGTERM');
    await reset.exited;
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
