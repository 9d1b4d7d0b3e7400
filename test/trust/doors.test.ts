// The doors themselves, on real files, processes and HTTP: a value with a line break never reaches a
// .env file; a program's output copied to a destination nobody reads stops being read (and a line with
// no newline is passed on in pieces); an HTTP answer is bounded after decompression.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readResponseBounded } from '../../src/platform/bounded.js';
import { envFileText, exportLines, writeEnvFile } from '../../src/platform/file-values.js';
import { copyLinesTo } from '../../src/platform/line-copy.js';
import { tempDir } from '../support/cli.js';

let dir: { path: string; remove(): Promise<void> };
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

describe('the values door', () => {
  it('refuses a client id with a planted line, naming the field, and writes no .env', async () => {
    const env = join(dir.path, '.env');
    await expect(
      writeEnvFile(env, {
        MKT_CLIENT_SECRET: 'cs_ok',
        MKT_CLIENT_ID: 'cid_x\nNODE_OPTIONS=--require /tmp/pwn.cjs',
      }),
    ).rejects.toThrow(/The value of MKT_CLIENT_ID holds a control character \(U\+000A/);
    expect(existsSync(env)).toBe(false);
    expect(() => exportLines({ MKT_WEBHOOK_SECRET: 'whsec_\u001b]52;c;x\u0007' })).toThrow(
      /MKT_WEBHOOK_SECRET/,
    );
  });

  it('writes plain values as they are, and never over an existing .env', async () => {
    expect(envFileText({ A: 'cid_1', B: 'has space "q"' })).toBe('A=cid_1\nB="has space \\"q\\""\n');
    const env = join(dir.path, 'kept.env');
    await writeFile(env, 'MINE=1\n');
    await expect(writeEnvFile(env, { A: 'b' })).rejects.toThrow(/already exists/);
    expect(await readFile(env, 'utf8')).toBe('MINE=1\n');
  });
});

describe('the line-copy door', () => {
  it('stops reading a program whose one endless line nobody reads, and passes it on in pieces', async () => {
    const child = spawn(process.execPath, ['-e', "for (;;) process.stdout.write('x'.repeat(65536))"], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const dest = new PassThrough({ highWaterMark: 64 * 1024 }); // nobody reads it
    let copied = 0;
    let longest = 0;
    void copyLinesTo(child.stdout, dest, (line) => {
      copied += line.length;
      longest = Math.max(longest, line.length);
      return `${line}\n`;
    });
    await new Promise((r) => setTimeout(r, 2_000));
    child.kill('SIGKILL');
    // Bounded by the reader: a few pieces past the destination's buffer, not what the program wrote.
    expect(copied).toBeLessThan(1024 * 1024);
    expect(copied).toBeGreaterThan(0);
    expect(longest).toBe(16 * 1024);
  });
});

describe('the bytes door', () => {
  it('refuses an answer past its bound counted after gzip, naming it and the limit', async () => {
    const bomb = gzipSync(Buffer.alloc(32 * 1024 * 1024, ' '));
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/json' });
      res.end(bomb);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as { port: number }).port}/`);
      await expect(
        readResponseBounded(res, { what: "the registry's answer", maxBytes: 65536 }),
      ).rejects.toThrow(/^the registry's answer is larger than 65536 bytes/);
    } finally {
      server.close();
    }
  });
});
