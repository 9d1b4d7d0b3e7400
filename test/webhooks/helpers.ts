import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MKT_BIN, baseEnv } from '../support/cli.js';

/** A running `mkt webhooks listen` child: its --json lines, stderr, and a way to wait for lines. */
export interface ListenProcess {
  child: ChildProcess;
  lines: Array<Record<string, unknown>>;
  stderr(): string;
  waitFor(pred: (lines: Array<Record<string, unknown>>) => boolean, timeoutMs?: number): Promise<void>;
  /** Waits until stderr (progress, warnings; JSON lines for reconnects with --json) satisfies `pred`. */
  waitForStderr(pred: (stderr: string) => boolean, timeoutMs?: number): Promise<void>;
  exit(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns the built CLI's `webhooks listen --json` (`json: false`: without --json, each stdout line
 * then a `{type: 'not_json', text}`) and collects its stdout lines.
 */
export function spawnListen(
  args: string[],
  configDir: string,
  env: Record<string, string>,
  options: { json?: boolean } = {},
): ListenProcess {
  const json = options.json === false ? [] : ['--json'];
  const child = spawn(process.execPath, [MKT_BIN, 'webhooks', 'listen', ...json, ...args], {
    env: { ...baseEnv(configDir), ...env },
    stdio: 'pipe',
  });
  const lines: Array<Record<string, unknown>> = [];
  let buffer = '';
  let err = '';
  const waiters = new Set<() => void>();
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    buffer += d;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const text = buffer.slice(0, nl);
      try {
        lines.push(JSON.parse(text) as Record<string, unknown>);
      } catch {
        lines.push({ type: 'not_json', text });
      }
      buffer = buffer.slice(nl + 1);
    }
    for (const w of waiters) w();
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    err += d;
    for (const w of waiters) w();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      for (const w of waiters) w();
      resolve({ code, signal });
    }),
  );
  const until = (done: () => boolean, timeoutMs: number) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (done()) {
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        } else if (child.exitCode !== null || child.signalCode !== null) {
          waiters.delete(check);
          clearTimeout(timer);
          reject(new Error(`listen exited (${child.exitCode ?? child.signalCode}); stderr:\n${err}`));
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out; lines: ${JSON.stringify(lines.slice(-5))}\nstderr:\n${err}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  return {
    child,
    lines,
    stderr: () => err,
    exit: () => exited,
    waitFor: (pred, timeoutMs = 15_000) => until(() => pred(lines), timeoutMs),
    waitForStderr: (pred, timeoutMs = 15_000) => until(() => pred(err), timeoutMs),
  };
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
