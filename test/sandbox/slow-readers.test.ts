import { readFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { tempDir } from '../support/cli.js';
import { developerTokens, killAllSandboxProcesses, startSandboxProcess } from '../support/sandbox.js';
import { burstEvents, call } from './helpers.js';

let dir: { path: string; remove(): Promise<void> };
const sockets: Socket[] = [];
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  killAllSandboxProcesses();
  await dir.remove();
});

/** The resident set size of a process, from /proc, in MiB. */
async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)![1]) / 1024;
}

/** Opens the relay on a raw socket that never reads what it is sent. */
function neverReads(port: number, path: string, key: string, lastEventId?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-API-Key: ${key}\r\n${lastEventId === undefined ? '' : `Last-Event-ID: ${lastEventId}\r\n`}Accept: text/event-stream\r\n\r\n`,
      );
      resolve();
    });
    socket.on('error', () => undefined);
    socket.once('error', reject);
    // No 'data' listener: the socket's buffer fills and it stops reading; the kernel's fills next.
    sockets.push(socket);
  });
}

describe('slow relay readers are bounded', () => {
  it('50 readers that never read and a burst keep the sandbox under 250 MB and answering', async () => {
    const p = await startSandboxProcess(join(dir.path, 'sandbox'), dir.path);
    const sb = p as unknown as Sandbox;
    const tokens = developerTokens(p, ['apps:write']);
    // A full history (10,000 deliveries): half the readers ask to replay it from the start, the
    // other half take live deliveries only.
    await burstEvents(p, tokens, 10_000, 16);
    const port = Number(new URL(p.siteUrl).port);
    const path = `/api/v1/apps/${p.seed.app.id}/webhooks/stream`;
    for (let i = 0; i < 50; i++) await neverReads(port, path, p.seed.test_key, i % 2 ? '0' : undefined);
    await burstEvents(p, tokens, 4_000, 16);
    expect(await rssMiB(p.pid)).toBeLessThan(250);
    const me = await call(sb, 'GET', '/api/v1/whoami', { key: p.seed.test_key });
    expect(me.status).toBe(200);
  }, 120_000);
});
