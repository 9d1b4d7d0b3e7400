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
