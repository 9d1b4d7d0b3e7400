// Hostile marketplace streams of the test's own: the relay (`GET …/webhooks/stream`) and the request
// log (`GET …/logs/stream`) answer Server-Sent Events written as told (signed deliveries with
// whatever headers, raw frames, a firehose), so a test can feed `mkt webhooks listen` and
// `mkt logs tail` what a real marketplace never would.
import { createHmac } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { startServer, type TestServer } from '../../support/server.js';

export const RELAY_SECRET = 'whsec_hostile_relay_secret_0123456789';

/** A signed envelope as the marketplace makes it: `{event, timestamp (now), data}`. */
export function envelope(event = 'subscription.created', data: object = {}): string {
  return JSON.stringify({ event, timestamp: new Date().toISOString(), data });
}

export function signed(body: string, secret = RELAY_SECRET): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** One relay delivery frame: `id: seq`, `event: delivery`, `{delivery_id, headers, body}`. */
export function deliveryFrame(
  seq: number | string,
  id: string,
  body: string,
  headers: Record<string, string> = {},
): string {
  const all = {
    'content-type': 'application/json',
    'x-marketplace-delivery': id,
    'x-marketplace-event': 'subscription.created',
    'x-marketplace-signature': signed(body),
    ...headers,
  };
  return `id: ${seq}\nevent: delivery\ndata: ${JSON.stringify({ delivery_id: id, headers: all, body })}\n\n`;
}

export const positionFrame = (seq: number) =>
  `id: ${seq}\nevent: position\ndata: ${JSON.stringify({ last_id: seq })}\n\n`;

/** An SSE server: each stream request gets `serve(res, lastEventId)`; the stream is left open after it. */
export interface HostileStream extends TestServer {
  /** Open stream responses (to write more to them). */
  streams: ServerResponse[];
}
export type HostileRelay = HostileStream;

/** A server answering `GET …<path>` (path ends with `suffix`) with an event stream `serve` writes. */
export async function startHostileStream(
  suffix: string,
  serve: (res: ServerResponse, lastEventId: string | undefined) => void,
): Promise<HostileStream> {
  const streams: ServerResponse[] = [];
  const server = await startServer((req, res) => {
    if (!new URL(req.url ?? '/', 'http://x').pathname.endsWith(suffix)) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ error: { code: 'not_found', message: 'Not here.' } }));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    res.flushHeaders();
    res.on('error', () => undefined);
    streams.push(res);
    res.on('close', () => streams.splice(streams.indexOf(res), 1));
    serve(res, req.headers['last-event-id'] as string | undefined);
  });
  const close = server.close;
  return Object.assign(server, {
    streams,
    close: async () => {
      for (const s of streams.splice(0)) s.destroy();
      await close();
    },
  });
}

/** A relay (`…/webhooks/stream`). */
export const startHostileRelay = (serve: (res: ServerResponse, lastEventId: string | undefined) => void) =>
  startHostileStream('/webhooks/stream', serve);

/**
 * Writes `frame(i)` for i = 0, 1, … as fast as the reader takes them (respecting the socket's
 * backpressure) until `stop()`; counts the bytes the socket accepted and says when it is blocked.
 */
export function firehose(res: ServerResponse, frame: (i: number) => string) {
  const state = { sent: 0, frames: 0, blocked: false, stopped: false };
  const pump = () => {
    state.blocked = false;
    while (!state.stopped && !res.destroyed) {
      const text = frame(state.frames++);
      state.sent += Buffer.byteLength(text);
      if (!res.write(text)) {
        state.blocked = true;
        return void res.once('drain', pump);
      }
    }
  };
  pump();
  return Object.assign(state, { stop: () => void (state.stopped = true) });
}

/** Resident memory of process `pid`, in MB (Linux /proc). */
export async function rssMb(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  return Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}
