import { HEADER } from '../../wire.js';
import { MAX_DELIVERY_BYTES } from '../../wire/delivery.js';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardLocalHost } from '../../platform/local-host.js';
import { deliveryHeaders } from '../forward.js';
import type { Arrival, Verdict } from './intake.js';

/** The largest delivery body the local receiver takes. */
export const MAX_BODY_BYTES = MAX_DELIVERY_BYTES;

/**
 * Reads the request body's bytes into `done`; past MAX_BODY_BYTES `done(undefined)` at once (the rest
 * is drained), and nothing when the request is aborted.
 */
function readBody(req: http.IncomingMessage, done: (body: Buffer | undefined) => void): void {
  let first: Buffer | undefined;
  let chunks: Buffer[] | undefined;
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    const over = size > MAX_BODY_BYTES;
    size += chunk.length;
    if (size <= MAX_BODY_BYTES) {
      if (!first) first = chunk;
      else (chunks ??= [first]).push(chunk);
    } else if (!over) {
      first = chunks = undefined; // the rest is read and dropped
      done(undefined);
    }
  });
  req.on('end', () => {
    if (size <= MAX_BODY_BYTES) done(chunks ? Buffer.concat(chunks) : (first ?? Buffer.alloc(0)));
  });
}

/** A running local receiver. */
export interface Receiver {
  url: string;
  /** Stops taking connections; `force` also ends the open ones and waits until all are closed. */
  close(force?: boolean): Promise<void>;
}

/**
 * The local receiver on 127.0.0.1: any path, POST only, a loopback Host only. Each delivery is
 * taken once `admit` lets it and answered after `take` settled it: 202 journaled, 200 duplicate,
 * 401/400 refused, 503 when the journal could not be written (the sender's retry is then taken as new).
 */
export async function startReceiver(input: {
  port: number;
  host?: string;
  take(arrival: Arrival): Promise<Verdict>;
  stopping(): boolean;
  /** Resolves (or is undefined) when a delivery may be taken: the forward backlog has room. */
  admit(): Promise<void> | undefined;
}): Promise<Receiver> {
  let port = input.port;
  const answer = (res: http.ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, [
      'content-type',
      'application/json',
      'content-length',
      String(Buffer.byteLength(text)),
    ]);
    res.end(text);
  };
  const stopping = (res: http.ServerResponse) =>
    answer(res, 503, { error: { code: 'shutting_down', message: 'mkt is stopping.' } });
  const take = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => {
    if (input.stopping()) return stopping(res);
    const headers = deliveryHeaders(req.headers);
    const id = headers[HEADER.delivery] || `local_${randomBytes(8).toString('hex')}`;
    input.take({ source: 'local', id, headers, body }).then(
      (verdict) => {
        if (verdict.status === 'refused') {
          const status = verdict.reason.endsWith('signature') ? 401 : 400;
          return answer(res, status, { error: { code: verdict.reason, message: verdict.message }, id });
        }
        answer(res, verdict.status === 'duplicate' ? 200 : 202, { id, status: verdict.status });
      },
      (err: Error) => {
        res.setHeader('retry-after', '5');
        answer(res, 503, { error: { code: 'journal_failed', message: err.message }, id });
      },
    );
  };
  const handle = (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!guardLocalHost(req, res, port)) return;
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return answer(res, 405, { error: { code: 'method_not_allowed', message: 'Deliveries are POSTed.' } });
    }
    if (input.stopping()) return stopping(res);
    readBody(req, (body) => {
      if (!body)
        return answer(res, 413, {
          error: { code: 'payload_too_large', message: 'Deliveries are at most 1 MiB.' },
        });
      const admitted = input.admit();
      if (admitted) void admitted.then(() => take(req, res, body));
      else take(req, res, body);
    });
  };
  const server = http.createServer(handle);
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(input.port, input.host ?? '127.0.0.1', () => resolve());
  });
  const a = server.address() as AddressInfo;
  port = a.port;
  const closed = new Promise<void>((r) => server.once('close', () => r()));
  let closing = false;
  return {
    url: `http://${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}/`,
    close: async (force = false) => {
      if (!closing) server.close();
      closing = true;
      if (!force) return server.closeIdleConnections();
      server.closeAllConnections();
      await closed;
    },
  };
}
