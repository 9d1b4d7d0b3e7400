import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startMkt, type RunningMkt } from '../support/cli.js';

/** A running `mkt webhooks listen`. */
export type ListenProcess = RunningMkt;

/**
 * Starts the built CLI's `webhooks listen --json` (`json: false`: without --json, each stdout line
 * then a `{type: 'not_json', text}`).
 */
export function spawnListen(
  args: string[],
  configDir: string,
  env: Record<string, string>,
  options: { json?: boolean } = {},
): ListenProcess {
  const json = options.json === false ? [] : ['--json'];
  return startMkt(['webhooks', 'listen', ...json, ...args], configDir, { env });
}

/** A request the forward target received. */
export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  raw: Buffer;
  answered: number;
}

/**
 * A real HTTP server standing in for the developer's webhook handler: `setDown` makes it answer 503,
 * `answer` picks the status per request, `stop` really closes it and `start` opens it again on the
 * same port.
 */
export async function startTarget(): Promise<{
  url: string;
  received: Received[];
  setDown(down: boolean): void;
  answer(status: (r: Received) => number): void;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}> {
  const received: Received[] = [];
  let down = false;
  let status = (_r: Received) => 200;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const r: Received = { headers: req.headers, body: raw.toString('utf8'), raw, answered: 0 };
      r.answered = down ? 503 : status(r);
      received.push(r);
      res.writeHead(r.answered).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const stop = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    setDown: (d) => (down = d),
    answer: (fn) => (status = fn),
    stop,
    start: () => new Promise<void>((r) => server.listen(port, '127.0.0.1', r)),
    close: () => (server.listening ? stop() : Promise.resolve()),
  };
}

/** Signs a body the way the marketplace does (independently of the CLI's code). */
export function sign(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** POSTs to a URL and answers status and body. */
export async function post(url: string, body: string | Buffer, headers: Record<string, string>) {
  const res = await fetch(url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', ...headers },
  });
  return { status: res.status, body: await res.text() };
}

/** Triggers an event through the sandbox simulator with a test key. */
export async function trigger(siteUrl: string, key: string, appId: string, event: string, data: object = {}) {
  const res = await fetch(`${siteUrl}/api/v1/simulator/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ app_id: appId, event, data }),
  });
  if (res.status !== 201) throw new Error(`trigger: ${res.status} ${await res.text()}`);
  return (await res.json()) as { delivery_id: string };
}
