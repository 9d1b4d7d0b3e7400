import type { Pool } from 'undici';
import { VERSION } from '../platform/version.js';

/** Headers that belong to one hop and are never forwarded (RFC 9110 section 7.6.1), plus Host. */
const HOP_BY_HOP = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'content-length',
]);

/** The end-to-end headers of a delivery, lowercase, single-valued: what is journaled and forwarded. */
export function deliveryHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    const name = k.toLowerCase();
    if (v === undefined || HOP_BY_HOP.has(name)) continue;
    out[name] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** The answer of the forward target. */
export interface ForwardResult {
  ok: boolean;
  status: number | null;
  error: string | null;
  ms: number;
}

/** Forwards to one URL: its connections are kept and reused; `close` ends them. */
export interface Forward {
  (body: Buffer, headers: Record<string, string>): Promise<ForwardResult>;
  close(): Promise<void>;
}

/** undici's codes for a target that took the connection and never answered. */
const NO_ANSWER = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * POSTs the exact bytes with the original headers to `url`; a 2xx answer is success. It never
 * rejects: a refused connection, a reset or no answer within `timeoutMs` is an error result. undici's
 * pool, because a forward through node:http's client costs twice the CPU (bench/listen.js).
 */
export function forwardTo(url: URL, options: { timeoutMs?: number } = {}): Forward {
  const timeoutMs = options.timeoutMs ?? 10_000;
  let pool: Promise<Pool> | undefined;
  const connect = async () =>
    new (await import('undici')).Pool(url.origin, { headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const path = `${url.pathname}${url.search}`;
  const added: Record<string, string> = { 'x-mkt-forwarded-by': `mkt/${VERSION}` };
  // Credentials in the URL (https://user:pass@host/hook) are sent as HTTP Basic, as node:http does.
  if (url.username || url.password)
    added.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
  const forward = async (body: Buffer, headers: Record<string, string>): Promise<ForwardResult> => {
    const started = performance.now();
    const ms = () => Math.round((performance.now() - started) * 10) / 10;
    try {
      const client = await (pool ??= connect());
      const res = await client.request({ path, method: 'POST', headers: { ...headers, ...added }, body });
      await res.body.dump(); // the body is not needed; reading it frees the connection
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      return { ok, status: res.statusCode, error: null, ms: ms() };
    } catch (err) {
      const { code, message } = err as NodeJS.ErrnoException;
      const error = NO_ANSWER.has(code!)
        ? `no answer within ${Math.round(timeoutMs / 1000)} s`
        : code && !code.startsWith('UND_ERR_')
          ? code // ECONNREFUSED, ECONNRESET…
          : message;
      return { ok: false, status: null, error, ms: ms() };
    }
  };
  return Object.assign(forward, { close: async () => (await pool)?.close() });
}
