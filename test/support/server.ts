import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a test server saw of one request. */
export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  /** The header lines as sent, names and values in turn (a name sent twice is there twice). */
  rawHeaders: string[];
  body: string;
  /** The body's bytes. */
  raw: Buffer;
}

/** A running {@link startServer}. */
export interface TestServer {
  url: string;
  port: number;
  seen: Seen[];
  server: Server;
  /** Resolves with `seen` once `count` requests arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<Seen[]>;
  /** Really closes the server (open connections too), so that nothing listens on its port. */
  stop(): Promise<void>;
  /** Listens again on the same port after `stop`. */
  start(): Promise<void>;
  /** Stops it if it is listening. */
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 that records every request (once its body has arrived) and answers
 * with `handler`.
 */
export async function startServer(
  handler: (req: IncomingMessage, res: ServerResponse, seen: Seen, index: number) => void,
): Promise<TestServer> {
  const seen: Seen[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const entry = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: raw.toString(),
        raw,
      };
      seen.push(entry);
      handler(req, res, entry, seen.length - 1);
      for (const w of waiters) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    server,
    waitFor: (count, timeoutMs = 5_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (seen.length < count) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(seen);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${count} requests, got ${seen.length}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    stop,
    start: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    close: () => (server.listening ? stop() : Promise.resolve()),
  };
}

/** A port on 127.0.0.1 that nothing listens on (for a process that must come back on the same port). */
export async function freePort(): Promise<number> {
  const server = await startServer(() => {});
  await server.close();
  return server.port;
}

/** A handler that answers every request with `status`, or `status(n)` for the n-th request (from 1). */
export function answerWith(status: number | ((n: number) => number)) {
  return (_req: IncomingMessage, res: ServerResponse, _seen: Seen, index: number): void =>
    void res.writeHead(typeof status === 'number' ? status : status(index + 1)).end();
}

/** Sends a JSON answer. */
export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/**
 * A webhook receiver that fails each delivery's first attempt at once (so that the sandbox retries
 * it in the background) and hands each retry's answer to `onRetry`, which may leave it hanging.
 */
export async function failFirstAttempt(onRetry: (res: ServerResponse) => void): Promise<TestServer> {
  const tried = new Set<string>();
  return startServer((req, res) => {
    const id = String(req.headers['x-marketplace-delivery']);
    if (!tried.has(id)) {
      tried.add(id);
      res.writeHead(500).end();
    } else onRetry(res);
  });
}
