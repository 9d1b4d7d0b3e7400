import { RATE_LIMITS } from '../../src/wire.js';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startSandbox,
  type Sandbox,
  type SandboxOptions,
  type SandboxSeed,
} from '../../src/sandbox/start-sandbox.js';
import { runMkt, startMkt, tempDir, type MktResult, type RunningMkt } from './cli.js';

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
    // Each answer checked against the OpenAPI document (test/support/check-answers.ts).
    checkAnswers: process.env.MKT_SANDBOX_CHECK_ANSWERS || undefined,
    checkAnswersDocument: process.env.MKT_SANDBOX_CHECK_ANSWERS_DOCUMENT || undefined,
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

const running = new Set<RunningMkt>();

/** Kills every sandbox process a test left running (call in afterEach). */
export function killAllSandboxProcesses(): void {
  for (const sandbox of running) sandbox.child.kill('SIGKILL');
  running.clear();
}

/**
 * For what an in-process sandbox cannot show (`kill -9`, a restart on the same folder, the umask,
 * signals): the built `mkt sandbox start --json --quiet --port 0 --data-dir DATA [ARGS]` under `umask`
 * (default 022) with a clean environment, once it has printed its JSON document.
 */
export async function startSandboxProcess(
  dataDir: string,
  configDir: string,
  options: { umask?: string; args?: string[]; env?: Record<string, string> } = {},
): Promise<SandboxProcess> {
  const args = ['sandbox', 'start', '--json', '--quiet', '--port', '0', '--data-dir', dataDir];
  const mkt = startMkt([...args, ...(options.args ?? [])], configDir, {
    umask: options.umask ?? '022',
    env: options.env,
  });
  running.add(mkt);
  const document = () => {
    try {
      return JSON.parse(mkt.stdout()) as Record<string, unknown>;
    } catch {
      return undefined; // not complete yet
    }
  };
  await mkt.waitFor(() => document() !== undefined);
  const info = document()!;
  return {
    pid: mkt.child.pid!,
    siteUrl: info.site_url as string,
    seed: info as unknown as SandboxSeed,
    info,
    stderr: mkt.stderr,
    async kill9() {
      mkt.child.kill('SIGKILL');
      await mkt.exit();
      running.delete(mkt);
    },
    async stop(signal) {
      mkt.child.kill(signal);
      running.delete(mkt);
      return (await mkt.exit()).code;
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

/** How long what `useSandbox` gives lives; the rest are the sandbox's options. */
export interface UseSandboxOptions extends Partial<SandboxOptions> {
  /** A fresh sandbox and config folder for each test (for tests that change or break them). */
  sandboxPerTest?: boolean;
  /** A fresh config folder for each test, the sandbox shared by the file. */
  dirPerTest?: boolean;
}

/**
 * Registers the hooks for one sandbox and one config folder shared by a test file (or, by
 * `options`, fresh for each test).
 */
export function useSandbox(options: UseSandboxOptions = {}): SandboxContext {
  const { sandboxPerTest, dirPerTest, ...overrides } = options;
  let sandbox: Sandbox | undefined;
  let dir: { path: string; remove(): Promise<void> } | undefined;
  const [sandboxUp, sandboxDown] = sandboxPerTest ? [beforeEach, afterEach] : [beforeAll, afterAll];
  const [dirUp, dirDown] = sandboxPerTest || dirPerTest ? [beforeEach, afterEach] : [beforeAll, afterAll];
  sandboxUp(async () => {
    sandbox = await startTestSandbox(overrides);
  });
  dirUp(async () => {
    dir = await tempDir();
  });
  dirDown(async () => {
    await dir?.remove();
  });
  sandboxDown(async () => {
    await sandbox?.close();
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

/**
 * An access token for the sandbox's developer (the owner of the seeded app) with `scopes`, obtained as
 * a person would: the consent page, Approve as the developer, then the token endpoint. (The simulator
 * never authorizes the developer: docs/DECISIONS.md §2.)
 */
export async function developerToken(
  sandbox: { siteUrl: string; seed: Sandbox['seed'] },
  scopes: string[],
): Promise<string> {
  const { app, developer } = sandbox.seed;
  const redirectUri = 'http://127.0.0.1:9/callback';
  const query = new URLSearchParams({
    client_id: app.client_id,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: scopes.join(' '),
  });
  const page = await (await fetch(`${sandbox.siteUrl}/oauth/authorize?${query}`)).text();
  const form = new URLSearchParams({ user_id: developer.id, decision: 'approve' });
  for (const m of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g))
    form.set(m[1]!, m[2]!);
  const consent = await fetch(`${sandbox.siteUrl}/oauth/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
    redirect: 'manual',
  });
  const code = new URL(consent.headers.get('location') ?? 'http://x/').searchParams.get('code');
  if (code === null) throw new Error(`consent answered ${consent.status}: ${await consent.text()}`);
  const res = await fetch(`${sandbox.siteUrl}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      client_id: app.client_id,
      client_secret: app.client_secret,
    }),
  });
  if (res.status !== 200) throw new Error(`token endpoint answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/**
 * Developer tokens for a burst of more requests than one grant may make in a minute
 * (`RATE_LIMITS.token`): each `next()` answers a token, a new grant's (one more user.authorized
 * delivery, counted in `grants`) once the current one has been handed out that many times.
 */
export function developerTokens(
  sandbox: { siteUrl: string; seed: Sandbox['seed'] },
  scopes: string[],
): { next(): Promise<string>; grants: number } {
  let current: Promise<string> | undefined;
  let used = 0;
  const tokens = {
    grants: 0,
    next() {
      if (current === undefined || used >= RATE_LIMITS.token) {
        current = developerToken(sandbox, scopes);
        used = 0;
        tokens.grants++;
      }
      used++;
      return current;
    },
  };
  return tokens;
}
