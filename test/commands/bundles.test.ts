import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { baseEnv, MKT_BIN, tempDir } from '../support/cli.js';

// A command loads only what it uses: the sandbox (its server, storage, console and their libraries)
// is a bundle of its own (esbuild.config.js), which only `mkt sandbox start` loads.

const root = fileURLToPath(new URL('../../', import.meta.url));
/** What marks the sandbox in a bundle's text or its metafile's inputs. */
const SANDBOX = [/build\/sandbox\//, /node_modules\/hono\//, /node_modules\/@hono\//, /node_modules\/zod\//];
const run = promisify(execFile);
let work: { path: string; remove(): Promise<void> };

beforeAll(async () => {
  work = await tempDir('mkt-bundles-');
  // Notes, as the process ends, every file it read whole and the Node built-ins it loaded.
  await writeFile(
    join(work.path, 'note-reads.cjs'),
    `const fs = require('node:fs');
const read = fs.readFileSync;
const files = [];
fs.readFileSync = function (path, ...rest) {
  if (typeof path === 'string') files.push(path);
  return read.call(this, path, ...rest);
};
process.on('exit', () => fs.writeFileSync(process.env.NOTE_FILE, JSON.stringify({ files, builtins: process.moduleLoadList, modules: Object.keys(require.cache) })));`,
  );
});
afterAll(() => work.remove());

interface Note {
  files: string[];
  builtins: string[];
  modules: string[];
}

/** Runs node with the note-taker preloaded; what the process read and loaded. */
async function noted(name: string, args: string[], extra: Record<string, string> = {}): Promise<Note> {
  const note = join(work.path, `${name}.json`);
  // Without NODE_EXTRA_CA_CERTS, with which Node itself loads node:crypto before any script.
  const { NODE_EXTRA_CA_CERTS: _, ...env } = baseEnv(join(work.path, name));
  await run(process.execPath, ['--require', join(work.path, 'note-reads.cjs'), ...args], {
    cwd: root,
    env: { ...env, ...extra, NOTE_FILE: note },
  });
  return JSON.parse(readFileSync(note, 'utf8'));
}

describe('the bundle every command loads', () => {
  it('has none of the sandbox in it (esbuild metafile of npm run build)', () => {
    const inputs = (name: string) =>
      Object.keys(JSON.parse(readFileSync(join(root, `build/${name}.meta.json`), 'utf8')).inputs);
    const cli = inputs('mkt');
    expect(cli.filter((path) => SANDBOX.some((re) => re.test(path)))).toEqual([]);
    expect(cli).toContain('build/commands/whoami.js');
    // The sandbox's own bundle has what the CLI's lacks.
    for (const re of SANDBOX.filter((r) => !/@hono/.test(r.source)))
      expect(
        inputs('sandbox').some((path) => re.test(path)),
        re.source,
      ).toBe(true);
  });

  it('is all that a real `mkt whoami --help` reads: no sandbox code, no node:sqlite, child_process, crypto, tty or fs/promises', async () => {
    const { files, builtins } = await noted('whoami', [MKT_BIN, 'whoami', '--help']);
    const bundles = files.filter((f) => f.endsWith('.cjs'));
    expect(bundles.map((f) => f.slice(root.length))).toEqual(['dist/mkt.cjs']);
    const text = readFileSync(bundles[0]!, 'utf8');
    for (const re of SANDBOX) expect(text, re.source).not.toMatch(re);
    expect(text).not.toContain('node:sqlite');
    expect(builtins.filter((b) => /sqlite/.test(b))).toEqual([]);
    // oclif's platform check asks is-wsl alone, not wsl-utils with its PowerShell helpers, the code
    // cache is checked without a keyed hash (≈ 3 ms each), output that is no terminal needs
    // neither chalk nor node:tty (≈ 2 ms), and nothing is written (no node:fs/promises, ≈ 1.8 ms):
    // BENCHMARKS.md, start-up.
    expect(builtins.filter((b) => /child_process|crypto|tty|fs\/promises/.test(b))).toEqual([]);
    // Both bundles all ASCII: src/boot.ts reads them as latin1, and V8 keeps them as one-byte strings
    // (one other character would make all of it two-byte).
    for (const file of [bundles[0]!, join(root, 'dist/sandbox.cjs')])
      expect(
        readFileSync(file).every((byte) => byte < 128),
        file,
      ).toBe(true);
  });

  it('is all it loads under NODE_ENV=development or test too: not TypeScript', async () => {
    for (const mode of ['development', 'test']) {
      const { modules, builtins } = await noted(`whoami-${mode}`, [MKT_BIN, 'whoami', '--help'], {
        NODE_ENV: mode,
      });
      expect(
        modules.filter((m) => /node_modules[\\/]typescript[\\/]/.test(m)),
        mode,
      ).toEqual([]);
      expect(
        builtins.filter((b) => /crypto/.test(b)),
        mode,
      ).toEqual([]);
    }
  });

  it('leaves the sandbox to its own bundle, compiled once into its own code cache', async () => {
    const cache = join(work.path, 'sandbox-cache');
    const load = ['-e', "require('./dist/boot.js').loadSandbox().startSandbox.name"];
    const first = await noted('sandbox', load);
    expect(first.files.filter((f) => f.endsWith('.cjs')).map((f) => f.slice(root.length))).toEqual([
      'dist/sandbox.cjs',
    ]);
    const env = { ...baseEnv(join(work.path, 'sandbox')), MKT_CACHE_DIR: cache };
    await run(process.execPath, load, { cwd: root, env });
    const [v8, ...rest] = (await readdir(join(cache, 'code-cache'))).filter((f) => f.endsWith('.v8'));
    expect(rest).toEqual([]);
    const written = (await stat(join(cache, 'code-cache', v8!))).mtimeMs;
    // A run that finds the cache good and whole leaves it as it is.
    await run(process.execPath, load, { cwd: root, env });
    expect((await stat(join(cache, 'code-cache', v8!))).mtimeMs).toBe(written);
  });

  it('loads undici only for a request that goes through a proxy, not for a NO_PROXY host', async () => {
    const server = createServer((_req, res) =>
      res.setHeader('content-type', 'application/json').end('{"id":"usr_1"}'),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const site = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // A proxy nobody answers at: a request sent through it would fail.
    const env = { MKT_SITE_URL: site, MKT_API_KEY: 'test_bundles', HTTP_PROXY: 'http://127.0.0.1:9' };
    try {
      const direct = await noted('no-proxy', [MKT_BIN, 'api', 'GET', '/whoami'], {
        ...env,
        NO_PROXY: 'localhost,127.0.0.1',
      });
      expect(direct.modules.filter((m) => /node_modules[\\/]undici[\\/]/.test(m))).toEqual([]);
      await expect(noted('proxy', [MKT_BIN, 'api', 'GET', '/whoami'], env)).rejects.toThrow(/Cannot reach/);
    } finally {
      server.close();
    }
  });
});
