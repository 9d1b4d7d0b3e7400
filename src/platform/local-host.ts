import type { IncomingMessage, ServerResponse } from 'node:http';
import { isLocalHost } from '../wire/local-host.js';
import { LOOPBACK_HOSTS } from '../wire.js';

export { isLocalHost };

/**
 * Answers 421 Misdirected Request and returns false when `req` does not name this loopback server;
 * call it first in a request handler: `if (!guardLocalHost(req, res, port)) return;`.
 */
export function guardLocalHost(
  req: IncomingMessage,
  res: ServerResponse,
  port: number,
  /** Narrower than every loopback name: the only `Host` values served. */
  only?: string[],
): boolean {
  const host = req.headers.host?.toLowerCase();
  if (only ? host !== undefined && only.includes(host) : isLocalHost(host, port)) return true;
  const names = only ?? LOOPBACK_HOSTS.map((name) => `${name}:${port}`);
  const body = JSON.stringify({
    error: {
      code: 'misdirected_request',
      message: `This local server answers only Host ${names.join(', ')}.`,
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
