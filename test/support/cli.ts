import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built CLI entry point (tests run after `npm run build`). */
export const MKT_BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url));

export interface MktResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Extra environment; MKT_* and proxy variables from the parent are never inherited. */
  env?: Record<string, string | undefined>;
  /** Text written to stdin, then stdin is closed (stdin is never a TTY here). */
  input?: string;
  /** Kill the process after this many ms (the test then sees signal SIGKILL). */
  timeoutMs?: number;
}

/** A clean environment for a child `mkt`: a temp HOME and config folder, the file credential store. */
export function baseEnv(configDir: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /^(MKT_|CI$|NO_COLOR$|HTTPS?_PROXY$|NO_PROXY$|BROWSER$)/i.test(k)) continue;
    env[k] = v;
  }
  return {
    ...env,
    HOME: configDir,
    MKT_CONFIG_DIR: configDir,
    MKT_DATA_DIR: join(configDir, 'data'),
    MKT_CREDENTIAL_STORE: 'file',
  };
}

/** Runs `mkt ARGS` as a user would and collects its output and exit code. */
export function runMkt(args: string[], configDir: string, options: RunOptions = {}): Promise<MktResult> {
  return new Promise((resolve, reject) => {
    const env = { ...baseEnv(configDir), ...options.env };
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
    const child = spawn(process.execPath, [MKT_BIN, ...args], {
      env: env as NodeJS.ProcessEnv,
      stdio: 'pipe',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = options.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), options.timeoutMs) : undefined;
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** A fresh temporary folder; remove it with the returned function. */
export async function tempDir(prefix = 'mkt-test-'): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}
