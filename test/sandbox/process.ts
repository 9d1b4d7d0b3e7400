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
  /** What it wrote to stderr so far. */
  stderr(): string;
  /** `kill -9`, and waits until the process is gone. */
  kill9(): Promise<void>;
  /** Sends `signal` and answers the exit code. */
  stop(signal: 'SIGINT' | 'SIGTERM'): Promise<number | null>;
}

const running = new Set<ChildProcess>();

/** Kills every sandbox process a test left running (call in afterEach). */
export function killAllSandboxProcesses(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

/**
 * Spawns the built `mkt sandbox start --json --quiet --port 0 --data-dir DATA [ARGS]` under `umask`
 * (default 022) with a clean environment, and waits for its JSON document.
 */
export function startSandboxProcess(
  dataDir: string,
  configDir: string,
  options: { umask?: string; args?: string[] } = {},
): Promise<SandboxProcess> {
  const args = [MKT_BIN, 'sandbox', 'start', '--json', '--quiet', '--port', '0', '--data-dir', dataDir];
  args.push(...(options.args ?? []));
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
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
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
        stderr: () => stderr,
        async kill9() {
          child.kill('SIGKILL');
          await exited;
          running.delete(child);
        },
        async stop(signal) {
          child.kill(signal);
          running.delete(child);
          return exited;
        },
      });
    });
    void exited.then(() => reject(new Error(`sandbox exited early: ${stderr}`)));
  });
}
