import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
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
  /** Another entry point than the built bin/run.js (e.g. a reference build of the same CLI). */
  bin?: string;
  /** The working folder (default: the test runner's). */
  cwd?: string;
  /** Stdin from /dev/null, as under cron, in CI or `ssh host cmd </dev/null`: nothing can be typed into it. */
  stdinNull?: boolean;
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
    // No background update check against the real registry from a test (test/update/ turns it on).
    MKT_NO_UPDATE_NOTIFIER: '1',
    // A sandbox it starts checks its answers against the OpenAPI document (test/support/check-answers.ts),
    // the one made once a run (test/support/answers-document.ts).
    ...Object.fromEntries(
      ['MKT_SANDBOX_CHECK_ANSWERS', 'MKT_SANDBOX_CHECK_ANSWERS_DOCUMENT'].flatMap((k) =>
        process.env[k] ? [[k, process.env[k]]] : [],
      ),
    ),
  };
}

/** Spawns `mkt ARGS` in the clean environment (an `undefined` value removes a variable), stdio piped. */
function spawnMkt(args: string[], configDir: string, options: RunOptions & { umask?: string }) {
  const env = { ...baseEnv(configDir), ...options.env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  const argv = [process.execPath, options.bin ?? MKT_BIN, ...args];
  // Under a umask, `exec` keeps the process id, so the pid is mkt's own.
  const [command, ...rest] = options.umask
    ? ['sh', '-c', `umask ${options.umask}; exec "$@"`, 'sh', ...argv]
    : options.stdinNull
      ? ['sh', '-c', 'exec "$@" </dev/null', 'sh', ...argv]
      : argv;
  const child = spawn(command!, rest, { env: env as NodeJS.ProcessEnv, cwd: options.cwd, stdio: 'pipe' });
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  const timer = options.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), options.timeoutMs) : undefined;
  child.on('close', () => clearTimeout(timer));
  return child;
}

/** Runs `mkt ARGS` as a user would and collects its output and exit code. */
export function runMkt(args: string[], configDir: string, options: RunOptions = {}): Promise<MktResult> {
  return new Promise((resolve, reject) => {
    const child = spawnMkt(args, configDir, options);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: string) => (stdout += d));
    child.stderr.on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** A long-running `mkt` (`webhooks listen`, `sandbox start`, a waiting `login`) a test talks to. */
export interface RunningMkt {
  child: ChildProcessWithoutNullStreams;
  /** Each complete stdout line, parsed as JSON, or `{type: 'not_json', text}`. */
  lines: Array<Record<string, unknown>>;
  stdout(): string;
  stderr(): string;
  /** Resolves once `pred(lines)` holds; rejects if mkt ends first or after `timeoutMs`. */
  waitFor(pred: (lines: Array<Record<string, unknown>>) => boolean, timeoutMs?: number): Promise<void>;
  /** Resolves with the first match of `pattern` in stderr (or once `pattern(stderr)` holds); likewise. */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  waitForStderr(pattern: (stderr: string) => boolean, timeoutMs?: number): Promise<void>;
  /** The exit code and signal, once mkt has ended. */
  exit(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `mkt ARGS` (stdin left open; `umask` runs it under that umask) and collects its output. */
export function startMkt(
  args: string[],
  configDir: string,
  options: Omit<RunOptions, 'input'> & { umask?: string } = {},
): RunningMkt {
  const child = spawnMkt(args, configDir, options);
  const lines: Array<Record<string, unknown>> = [];
  let stdout = '';
  let stderr = '';
  let ended = false;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of waiters) w();
  };
  child.stdout.on('data', (d: string) => {
    const from = stdout.lastIndexOf('\n') + 1;
    stdout += d;
    const complete = stdout.slice(from, stdout.lastIndexOf('\n') + 1);
    for (const text of complete.split('\n').slice(0, -1)) {
      try {
        lines.push(JSON.parse(text) as Record<string, unknown>);
      } catch {
        lines.push({ type: 'not_json', text });
      }
    }
    wake();
  });
  child.stderr.on('data', (d: string) => {
    stderr += d;
    wake();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      ended = true;
      wake();
      resolve({ code, signal });
    }),
  );
  const until = <T>(done: () => T | undefined, what: string, timeoutMs: number) =>
    new Promise<T>((resolve, reject) => {
      const finish = (settle: () => void) => {
        waiters.delete(check);
        clearTimeout(timer);
        settle();
      };
      const check = () => {
        const result = done();
        if (result !== undefined) finish(() => resolve(result));
        else if (ended)
          finish(() => reject(new Error(`mkt ${args.join(' ')} ended before ${what}; stderr:\n${stderr}`)));
      };
      const timer = setTimeout(
        () =>
          finish(() =>
            reject(
              new Error(
                `timed out waiting for ${what}; lines: ${JSON.stringify(lines.slice(-5))}\nstderr:\n${stderr}`,
              ),
            ),
          ),
        timeoutMs,
      );
      waiters.add(check);
      check();
    });
  return {
    child,
    lines,
    stdout: () => stdout,
    stderr: () => stderr,
    exit: () => exited,
    waitFor: (pred, timeoutMs = 15_000) =>
      until(() => (pred(lines) ? null : undefined), 'its lines matched', timeoutMs).then(() => {}),
    waitForStderr: ((pattern: RegExp | ((stderr: string) => boolean), timeoutMs = 15_000) =>
      typeof pattern === 'function'
        ? until(() => (pattern(stderr) ? null : undefined), 'its stderr matched', timeoutMs).then(() => {})
        : until(
            () => pattern.exec(stderr) ?? undefined,
            `printing ${pattern}`,
            timeoutMs,
          )) as RunningMkt['waitForStderr'],
  };
}

/** A fresh temporary folder; remove it with the returned function. */
export async function tempDir(prefix = 'mkt-test-'): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/**
 * The machine's global npm configuration file (its CA file, registry, proxy). npm looks for it under
 * the global prefix, so a test that moves the prefix to a temporary folder names it again: the
 * person's own npm settings still apply. (Under `npm test` and scripts/test-everything.sh,
 * `npm_config_globalconfig` already names the machine's; npm answers it.)
 */
export function npmGlobalConfig(): string {
  return execFileSync('npm', ['config', 'get', 'globalconfig'], { encoding: 'utf8' }).trim();
}
