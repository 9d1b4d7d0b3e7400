import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';

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
