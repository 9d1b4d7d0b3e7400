import type { IncomingMessage, ServerResponse } from 'node:http';
import { LOOPBACK_HOSTS } from '../wire.js';

/**
 * DNS-rebinding guard for mkt's local servers (the sandbox, `mkt login`'s loopback listener and
 * `webhooks listen`'s receiver): they listen on 127.0.0.1, yet a web page can reach them under a
 * name it controls that resolves to 127.0.0.1. Only a `Host` naming the loopback address itself is
 * served (docs/PROTOCOL.md, "Local servers").
 */
export function isLocalHost(host: string | undefined, port: number): boolean {
  if (host === undefined) return false;
  const h = host.toLowerCase();
  return LOOPBACK_HOSTS.some((name) => h === `${name}:${port}`);
}

/**
 * Answers 421 Misdirected Request and returns false when `req` does not name this loopback server;
 * call it first in a request handler: `if (!guardLocalHost(req, res, port)) return;`.
 */
export function guardLocalHost(req: IncomingMessage, res: ServerResponse, port: number): boolean {
  if (isLocalHost(req.headers.host, port)) return true;
  const body = JSON.stringify({
    error: {
      code: 'misdirected_request',
      message: `This local server answers only Host ${LOOPBACK_HOSTS.map((name) => `${name}:${port}`).join(', ')}.`,
    },
  });
  res.writeHead(421, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    connection: 'close',
  });
  res.end(body);
  return false;
}
