import { createHmac } from 'node:crypto';
import { afterEach, beforeEach } from 'vitest';
import { startMkt, tempDir, type RunningMkt } from '../support/cli.js';
import { startServer, type Seen } from '../support/server.js';

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

/** A request the forward target received, and the status it answered. */
export interface Received extends Seen {
  answered: number;
}

/**
 * The developer's webhook handler (a {@link startServer}) at `/webhooks`: `setDown` makes it answer
 * 503, `answer` picks the status per request; `stop` and `start` close it and open it on the same port.
 */
export async function startTarget() {
  let down = false;
  let status = (_r: Received) => 200;
  const server = await startServer((_req, res, seen) => {
    const r = seen as Received;
    r.answered = down ? 503 : status(r);
    res.writeHead(r.answered).end();
  });
  return {
    ...server,
    url: `${server.url}/webhooks`,
    received: server.seen as Received[],
    setDown: (d: boolean) => void (down = d),
    answer: (fn: (r: Received) => number) => void (status = fn),
  };
}

/**
 * Registers, for each test, a config folder, a forward target, and a list of the listen processes the
 * test starts: killed after it. Register it after the file's own hooks: its after-hooks then run first.
 */
export function useListenFixture() {
  let dir: { path: string; remove(): Promise<void> } | undefined;
  let target: Awaited<ReturnType<typeof startTarget>> | undefined;
  const running: ListenProcess[] = [];
  beforeEach(async () => {
    dir = await tempDir();
    target = await startTarget();
  });
  afterEach(async () => {
    for (const l of running.splice(0)) l.child.kill('SIGKILL');
    await target?.close();
    await dir?.remove();
  });
  return {
    running,
    get dir() {
      return dir!.path;
    },
    get target() {
      return target!;
    },
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
