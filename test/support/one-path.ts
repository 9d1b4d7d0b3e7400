// The reference for test/commands/one-path*.test.ts: oclif run the plain way — from node_modules, on
// tsc's output in build/, the help and autocomplete plugins as plugins, with a manifest that oclif
// makes here from build/ (not the bundle's: without one, each of its runs imported every command, three
// times the CPU of a run of the bundle) — beside the bundled CLI (dist/, esbuild.config.js). Split over
// several files so that they run beside the others.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect } from 'vitest';
import { copyFile, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MKT_BIN, runMkt, tempDir, type MktResult } from './cli.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface OnePath {
  /** The built CLI's manifest (its command ids). */
  readonly manifest: { commands: Record<string, { hidden?: boolean }> };
  /** Runs `args` through both entry points with the same environment; expects the same bytes and exit. */
  expectSame(args: string[], env?: Record<string, string | undefined>): Promise<MktResult>;
}

/** Sets up the reference entry point for a test file; its folder is removed after the file. */
export function useOnePath(): OnePath {
  let reference: { path: string; remove(): Promise<void> };
  let referenceBin: string;
  let manifest: OnePath['manifest'] | undefined;
  let runs = 0;

  beforeAll(async () => {
    reference = await tempDir('mkt-reference-');
    const pjson = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
    pjson.oclif.plugins = ['@oclif/plugin-help', '@oclif/plugin-autocomplete'];
    // Commands, help class and hooks from tsc's output instead of the bundle.
    await writeFile(
      join(reference.path, 'package.json'),
      JSON.stringify(pjson).replaceAll('./dist/', './build/'),
    );
    await symlink(join(root, 'build'), join(reference.path, 'build'));
    await symlink(join(root, 'node_modules'), join(reference.path, 'node_modules'));
    await mkdir(join(reference.path, 'bin'));
    const bin = await readFile(MKT_BIN, 'utf8');
    expect(bin).toContain("require('../dist/oclif.js')");
    expect(bin).toContain("require('../dist/boot.js')");
    referenceBin = join(reference.path, 'bin', 'run.js');
    // oclif as it is published, and no help screen kept by the bundle's boot (src/boot.ts).
    await writeFile(
      referenceBin,
      bin
        .replace("require('../dist/oclif.js')", "require('@oclif/core')")
        .replace(
          "require('../dist/boot.js')",
          '{ helpFromCache: () => false, commandManifest: () => undefined }',
        ),
    );
    await copyFile(join(root, 'bin', 'package.json'), join(reference.path, 'bin', 'package.json'));
    await promisify(execFile)(process.execPath, [join(root, 'node_modules/oclif/bin/run.js'), 'manifest'], {
      cwd: reference.path,
      env: { ...process.env, OCLIF_SKIP_NEW_VERSION_CHECK: 'true' },
    });
    manifest = JSON.parse(await readFile(join(root, 'oclif.manifest.json'), 'utf8'));
  });
  afterAll(() => reference.remove());

  /** Runs one of the two entry points with a fresh config folder of its own. */
  async function run(bin: string, args: string[], env: Record<string, string | undefined>) {
    const dir = join(reference.path, `one-path-${++runs}`);
    await mkdir(dir);
    try {
      return await runMkt(args, dir, { bin, cwd: dir, env: { COLUMNS: '100', ...env } });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  return {
    get manifest() {
      if (!manifest) throw new Error('useOnePath: the manifest is only there inside tests');
      return manifest;
    },
    async expectSame(args, env = {}) {
      const bundled = await run(MKT_BIN, args, env);
      const plain = await run(referenceBin, args, env);
      // Process ids, the server's request ids and each run's config folder differ from run to run.
      const pid = (r: MktResult) => ({
        ...r,
        stdout: r.stdout.replace(/one-path-\d+/g, 'one-path-N'),
        stderr: r.stderr
          .replace(/\(node:\d+\)/g, '(node:PID)')
          .replace(/req_[0-9a-f]+/g, 'req_ID')
          .replace(/one-path-\d+/g, 'one-path-N'),
      });
      expect({ args, ...pid(bundled) }).toEqual({ args, ...pid(plain) });
      return bundled;
    },
  };
}

/** Checks each of `cases` with `check`, four at a time (each a pair of processes that only read). */
export async function eachOf<T>(cases: T[], check: (c: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < cases.length) await check(cases[next++]!);
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}
