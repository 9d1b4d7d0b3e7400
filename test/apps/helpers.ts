import { expect } from 'vitest';
import { runMkt } from '../support/cli.js';
import { startServer, type Seen } from '../support/server.js';

/** A {@link startServer} that answers each request with the JSON of `respond` (by default a 500). */
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
