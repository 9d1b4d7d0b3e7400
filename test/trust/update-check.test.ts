// The update notice and its background check through the doors: the check reads at most 64 KiB of
// the registry's answer counted after decompression (a gzip bomb is dropped at once, within its
// 10 s), and the notice uses the cache folder only by the code cache's rule: a state file written
// never through a link planted there, and never one another user owns read or announced.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MKT_BIN, baseEnv, tempDir } from '../support/cli.js';
import { typeInTerminal } from '../support/terminal.js';

const CHECK = fileURLToPath(new URL('../../bin/update-check.js', import.meta.url));
let dir: { path: string; remove(): Promise<void> };
let server: Server;
let registry: string;
/** 64 MiB of spaces, gzip-compressed (~64 KiB): sent 16 times it is 1 GiB of JSON whitespace. */
const member = gzipSync(Buffer.alloc(64 * 1024 * 1024, ' '));

beforeAll(async () => {
  dir = await tempDir();
  server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    for (let i = 0; i < 16; i++) res.write(member);
    res.end(gzipSync('{"latest":"9.9.9"}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  registry = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
});
afterAll(async () => {
  server.close();
  await dir.remove();
});

/** Runs the check as the notice starts it; answers its exit, time taken and peak memory (KiB, /proc). */
function runCheck(file: string): Promise<{ ms: number; peakKiB: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, [CHECK, file, registry], { stdio: 'ignore' });
    let peakKiB = 0;
    const watch = setInterval(() => {
      try {
        const hwm = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        peakKiB = Math.max(peakKiB, Number(hwm?.[1] ?? 0));
      } catch {
        // ended
      }
    }, 20);
    child.on('close', () => {
      clearInterval(watch);
      resolve({ ms: Date.now() - started, peakKiB });
    });
  });
}

/** `mkt config get site-url` on a pseudo-terminal (the notice speaks only there), with the cache at `cache`. */
async function onTerminal(cache: string) {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const { MKT_NO_UPDATE_NOTIFIER: _, ...base } = baseEnv(dir.path);
  const terminal = typeInTerminal(
    [process.execPath, MKT_BIN, 'config', 'get', 'site-url'].map(quote).join(' '),
    {
      env: {
        ...base,
        TERM: 'dumb',
        NO_COLOR: '1',
        MKT_CACHE_DIR: cache,
        MKT_UPDATE_REGISTRY: 'http://127.0.0.1:9/',
      },
      timeoutMs: 20_000,
    },
  );
  return { code: await terminal.exit, screen: terminal.screen() };
}

describe('the update check', () => {
  it.runIf(process.platform === 'linux')(
    'drops a gzip bomb (1 GiB of JSON in 1 MiB) at 64 KiB: little memory, nothing written',
    async () => {
      const cache = join(dir.path, 'bomb');
      await mkdir(cache, { mode: 0o700 });
      const file = join(cache, 'update-check.json');
      const { ms, peakKiB } = await runCheck(file);
      expect(ms).toBeLessThan(10_000);
      expect(peakKiB).toBeLessThan(200 * 1024);
      expect(existsSync(file)).toBe(false);
    },
    30_000,
  );
});

describe('the update notice', () => {
  it('never writes its state through a link planted in a cache folder others can write', async () => {
    const cache = join(dir.path, 'open-cache');
    await mkdir(cache);
    await chmod(cache, 0o777);
    const precious = join(dir.path, 'precious');
    await writeFile(precious, 'keep me\n');
    await symlink(precious, join(cache, 'update-check.json'));
    const r = await onTerminal(cache);
    expect(r.code, r.screen).toBe(0);
    expect(await readFile(precious, 'utf8')).toBe('keep me\n');
  });

  it.runIf(process.getuid?.() === 0)('never reads or announces a state file another user owns', async () => {
    const cache = join(dir.path, 'theirs');
    await mkdir(cache, { mode: 0o700 });
    const file = join(cache, 'update-check.json');
    await writeFile(file, JSON.stringify({ latest: '99.0.0', checked_at: Date.now() }));
    await chown(file, 12345, 12345);
    const r = await onTerminal(cache);
    expect(r.code, r.screen).toBe(0);
    expect(r.screen).not.toContain('99.0.0');
  });
});
