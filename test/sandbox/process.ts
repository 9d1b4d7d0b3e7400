import { spawn, type ChildProcess } from 'node:child_process';
import type { SandboxSeed } from '../../src/sandbox/index.js';
import { MKT_BIN, baseEnv } from '../support/cli.js';

/** `mkt sandbox start` running as its own process, as a developer leaves it running. */
export interface SandboxProcess {
  pid: number;
  siteUrl: string;
  seed: SandboxSeed;
  /** What `--json` printed. */
  info: Record<string, unknown>;
  /** `kill -9`, and waits until the process is gone. */
  kill9(): Promise<void>;
}

const running = new Set<ChildProcess>();

/** Kills every sandbox process a test left running (call in afterEach). */
export function killAllSandboxProcesses(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

/**
 * Spawns the built `mkt sandbox start --json --port 0 --data-dir DATA` under `umask` (default 022)
 * with a clean environment, and waits for its JSON document.
 */
export function startSandboxProcess(
  dataDir: string,
  configDir: string,
  options: { umask?: string } = {},
): Promise<SandboxProcess> {
  const args = [MKT_BIN, 'sandbox', 'start', '--json', '--quiet', '--port', '0', '--data-dir', dataDir];
  // exec keeps the process id, so the pid is the sandbox's own.
  const child = spawn(
    'sh',
    ['-c', `umask ${options.umask ?? '022'}; exec "$@"`, 'sh', process.execPath, ...args],
    {
      env: baseEnv(configDir),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  running.add(child);
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  let stdout = '';
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      let info: Record<string, unknown>;
      try {
        info = JSON.parse(stdout) as Record<string, unknown>;
      } catch {
        return; // the document is not complete yet
      }
      resolve({
        pid: child.pid!,
        siteUrl: info.site_url as string,
        seed: info as unknown as SandboxSeed,
        info,
        async kill9() {
          child.kill('SIGKILL');
          await exited;
          running.delete(child);
        },
      });
    });
    void exited.then(() => reject(new Error(`sandbox exited early: ${stderr}`)));
  });
}
