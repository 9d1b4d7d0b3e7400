import { UsageError } from './errors.js';
import { LOOPBACK_HOSTS } from './wire.js';

/**
 * The one rule for every URL a user types (docs/CLI.md, URLs): http or https, no #fragment, no user
 * name or password (but in a forward target, where they are sent as HTTP Basic); then per kind:
 * - `site` (--site-url, MKT_SITE_URL): no query; kept as origin and path without a trailing slash;
 * - `redirect` (--redirect-uri): plain http only on a loopback host;
 * - `webhook`, `embed` (--webhook-url, --embed-url): "" clears it (null);
 * - `forward` (--forward-to): `localhost:3000/hooks` means `http://localhost:3000/hooks`.
 */
export type UrlKind = 'site' | 'redirect' | 'webhook' | 'embed' | 'forward';

const ACCEPTED: Record<UrlKind, string> = {
  site: 'http(s)://host[:port]',
  redirect: `https://… or, for a local app, ${LOOPBACK_HOSTS.map((h) => `http://${h}`).join(', ')}`,
  webhook: 'an http(s)://host/path URL (or "" to clear it)',
  embed: 'an http(s)://host/path URL (or "" to clear it)',
  forward: 'http(s)://host[:port]/path, or host:port/path for http',
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
  const fail = (why: string) => new UsageError(`${label} "${value}"${note} ${why}`, { code: 'invalid_url' });
  const accepted = ACCEPTED[kind];
  // A forward target without a scheme is http (`localhost:3000` parses as the scheme "localhost:").
  const text = kind === 'forward' && !/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? `http://${value}` : value;
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
    throw fail('must not contain a user name or password.');
  if (text.includes('#')) throw fail('must not have a #fragment.');
  if (kind === 'site' && url.search) throw fail('must not have a query.');
  if (kind === 'redirect' && url.protocol === 'http:' && !isLoopback(url))
    throw fail(`uses plain http on a host that is not loopback; expected ${accepted}.`);
  return url;
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
