import { expect } from 'vitest';
import { MKT_BIN, baseEnv, runMkt, type MktResult } from '../support/cli.js';
import { developerToken as sandboxDeveloperToken } from '../support/sandbox.js';
import { startServer, type Seen } from '../support/server.js';
import { typeInTerminal } from '../support/terminal.js';
import type { Sandbox } from '../../src/sandbox/index.js';

/** A node:http server on 127.0.0.1 that records every request and answers with `respond`. */
export async function startRecordingServer(
  respond: (req: Seen) => { status: number; body?: unknown } = () => ({
    status: 500,
    body: { error: { code: 'test_server', message: 'this server only counts requests' } },
  }),
): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  return startServer((_req, res, seen) => {
    const { status, body } = respond(seen);
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(body === undefined ? '' : JSON.stringify(body));
  });
}

/** An access token for the sandbox's developer (the owner of every seeded app), with these scopes. */
export const developerToken = (sandbox: Sandbox, scopes: string[]): Promise<string> =>
  sandboxDeveloperToken(sandbox, scopes);

/** A fresh test key for the seeded app, so that each test file has its own rate-limit budget. */
export async function freshTestKey(sandbox: Sandbox): Promise<string> {
  const res = await fetch(`${sandbox.siteUrl}/api/v1/apps/${sandbox.seed.app.id}/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': sandbox.seed.test_key },
    body: JSON.stringify({ mode: 'test' }),
  });
  return ((await res.json()) as { key: string }).key;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Runs `mkt ARGS` on a real pseudo-terminal (util-linux `script`), waits until the output shows
 * `waitFor`, then types `answer`. stdout and stderr arrive mixed, as on a terminal.
 */
export async function runMktInTty(
  args: string[],
  configDir: string,
  options: { env?: Record<string, string>; waitFor: string; answer: string; timeoutMs?: number },
): Promise<MktResult> {
  const terminal = typeInTerminal([process.execPath, MKT_BIN, ...args].map(quote).join(' '), {
    env: { ...baseEnv(configDir), ...options.env, TERM: 'dumb', NO_COLOR: '1' },
    answers: [[options.waitFor, options.answer]],
    timeoutMs: options.timeoutMs ?? 15_000,
  });
  const code = await terminal.exit;
  return { code, signal: null, stdout: terminal.raw(), stderr: '' };
}

/**
 * Runs `args` against a server that only counts requests and expects a usage error (exit 2)
 * matching `message` before any request was sent.
 */
export async function expectRefusedBeforeAnyRequest(args: string[], configDir: string, message: RegExp) {
  const server = await startRecordingServer();
  try {
    const res = await runMkt(args, configDir, {
      env: { MKT_SITE_URL: server.url, MKT_API_KEY: 'test_counting' },
    });
    expect(res.stderr).toMatch(message);
    expect(res.code).toBe(2);
    expect(server.seen).toEqual([]);
  } finally {
    await server.close();
  }
}
