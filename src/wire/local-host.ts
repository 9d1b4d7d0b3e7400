import { LOOPBACK_HOSTS } from '../wire.js';

/** The `Host` values served, by port: made once, not at each request. */
const servedHosts = new Map<number, Set<string>>();

/**
 * DNS-rebinding guard for mkt's local servers (the sandbox, `mkt login`'s loopback listener and
 * `webhooks listen`'s receiver): they listen on 127.0.0.1, yet a web page can reach them under a
 * name it controls that resolves to 127.0.0.1. Only a `Host` naming the loopback address itself is
 * served (docs/PROTOCOL.md, "Local servers").
 */
export function isLocalHost(host: string | undefined, port: number): boolean {
  if (host === undefined) return false;
  let hosts = servedHosts.get(port);
  if (!hosts) servedHosts.set(port, (hosts = new Set(LOOPBACK_HOSTS.map((name) => `${name}:${port}`))));
  return hosts.has(host.toLowerCase());
}
