import { afterAll, beforeAll } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';
import { runMkt, tempDir, type MktResult } from './cli.js';

/**
 * Starts a sandbox on 127.0.0.1 with a fresh temporary data folder, any free port and short retry
 * waits. The caller closes it; closing also removes the temporary folder (unless `dataDir` was given).
 */
export async function startTestSandbox(overrides: Partial<SandboxOptions> = {}): Promise<Sandbox> {
  const ownDir = overrides.dataDir === undefined;
  const dataDir = overrides.dataDir ?? (await mkdtemp(join(tmpdir(), 'mkt-sandbox-')));
  const sandbox = await startSandbox({
    port: 0,
    host: '127.0.0.1',
    deliveryBackoffMs: [20, 40, 80, 160, 320],
    deliveryTimeoutMs: 2_000,
    ...overrides,
    dataDir,
  });
  return {
    ...sandbox,
    async close() {
      await sandbox.close();
      if (ownDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** What `useSandbox` gives a test file. */
export interface SandboxContext {
  readonly sandbox: Sandbox;
  /** A temporary config folder shared by the file's tests. */
  readonly dir: string;
  /** MKT_SITE_URL and MKT_API_KEY (the seeded test key). */
  readonly env: Record<string, string>;
  /** Runs `mkt ARGS` against the sandbox with the test key, plus `extra` environment. */
  mkt(args: string[], extra?: Record<string, string | undefined>): Promise<MktResult>;
}

/** Registers beforeAll/afterAll hooks for one sandbox and one config folder shared by a test file. */
export function useSandbox(): SandboxContext {
  let sandbox: Sandbox | undefined;
  let dir: { path: string; remove(): Promise<void> } | undefined;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
    dir = await tempDir();
  });
  afterAll(async () => {
    await sandbox?.close();
    await dir?.remove();
  });
  const context: SandboxContext = {
    get sandbox() {
      if (!sandbox) throw new Error('useSandbox: the sandbox is only there inside tests');
      return sandbox;
    },
    get dir() {
      if (!dir) throw new Error('useSandbox: the folder is only there inside tests');
      return dir.path;
    },
    get env() {
      return { MKT_SITE_URL: context.sandbox.siteUrl, MKT_API_KEY: context.sandbox.seed.test_key };
    },
    mkt: (args, extra = {}) => runMkt(args, context.dir, { env: { ...context.env, ...extra } }),
  };
  return context;
}
