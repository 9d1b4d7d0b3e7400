import { UsageError } from './errors.js';
import { LOOPBACK_HOSTS } from './wire.js';

/**
 * The one rule for every URL a user types (docs/CLI.md, URLs): http or https, no #fragment, no user
 * name or password (but in a forward target, where they are sent as HTTP Basic); then per kind:
 * - `site` (--site-url, MKT_SITE_URL): no query; kept as origin and path without a trailing slash;
 * - `redirect` (--redirect-uri): plain http only on a loopback host;
 * - `webhook`, `embed` (--webhook-url, --embed-url): "" clears it (null);
 * - `forward` (--forward-to): what people type for a server on their machine: `3000` and `:3000/hooks`
 *   mean `http://localhost:3000/…`, `localhost:3000/hooks` means `http://localhost:3000/hooks`.
 */
export type UrlKind = 'site' | 'redirect' | 'webhook' | 'embed' | 'forward';

const ACCEPTED: Record<UrlKind, string> = {
  site: 'http(s)://host[:port]',
  redirect: `https://… or, for a local app, ${LOOPBACK_HOSTS.map((h) => `http://${h}`).join(', ')}`,
  webhook: 'an http(s)://host/path URL (or "" to clear it)',
  embed: `https://… or, for a page on your machine, ${LOOPBACK_HOSTS.map((h) => `http://${h}`).join(', ')} (or "" to clear it)`,
  forward: 'a port (3000), :3000/path, host:port/path (http), or http(s)://host[:port]/path',
};

/** Whether a URL (or a host name) is a loopback host. */
export function isLoopback(url: URL | string): boolean {
  const host = typeof url === 'string' ? url : url.hostname;
  return (LOOPBACK_HOSTS as readonly string[]).includes(host.toLowerCase());
}

/**
 * Checks a URL the user typed; `label` names where it came from (`--webhook-url`, `The site URL`),
 * `note` adds where that was set (` (from MKT_SITE_URL)`). Throws a usage error saying what is wrong.
 */
export function checkUrl(value: string, kind: UrlKind, label: string, note = ''): URL {
  // A user name or password is never repeated back (it would reach a terminal, a log or a CI page).
  const shown = value.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1…@');
  const fail = (why: string) => new UsageError(`${label} "${shown}"${note} ${why}`, { code: 'invalid_url' });
  const accepted = ACCEPTED[kind];
  const text = kind === 'forward' ? forwardText(value) : value;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw fail(`is not a URL; expected ${accepted}.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw fail(`must start with http:// or https://.`);
  // A forward target may carry credentials (sent as HTTP Basic); an address others see may not.
  if (kind !== 'forward' && (url.username || url.password))
    throw fail('holds a user name or password, which mkt never stores or sends; give the URL without it.');
  if (text.includes('#')) throw fail('must not have a #fragment.');
  if (kind === 'site' && url.search) throw fail('must not have a query.');
  if ((kind === 'redirect' || kind === 'embed') && url.protocol === 'http:' && !isLoopback(url))
    throw fail(`uses plain http on a host that is not loopback; expected ${accepted}.`);
  return url;
}

/**
 * A forward target as a URL text: a bare port (`3000`, `:3000/hooks`) is on this machine's
 * `localhost` (not the IPv4 number 0.0.11.184), and a target without a scheme is http
 * (`localhost:3000` would parse as the scheme "localhost:").
 */
function forwardText(value: string): string {
  const port = /^:?(\d{1,5})(\/.*)?$/.exec(value);
  if (port) return `http://localhost:${port[1]}${port[2] ?? '/'}`;
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
}

/** A site URL as requests are built from it: origin and path, no trailing slash. */
export function siteUrl(value: string, note: string): string {
  const url = checkUrl(value, 'site', 'The site URL', note);
  return url.origin + url.pathname.replace(/\/+$/, '');
}

/** A webhook or embed URL, or null for "" (clear it). */
export function optionalHttpUrl(value: string, kind: 'webhook' | 'embed', label: string): string | null {
  if (value === '') return null;
  checkUrl(value, kind, label);
  return value;
}
