import type { Pool } from 'undici';
import { HEADER } from '../wire.js';
import { signBody } from '../wire/signing.js';
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

/**
 * The end-to-end headers of a delivery, lowercase, single-valued: what is journaled and forwarded.
 * The one filter for both ways in (the local receiver and the relay stream): a header of one hop
 * (Host, Content-Length, Expect…) never reaches the handler, whoever sent it.
 */
export function deliveryHeaders(headers: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in headers) {
    const v = headers[k];
    const name = k.toLowerCase();
    if (HOP_BY_HOP.has(name)) continue;
    if (typeof v === 'string') out[name] = v;
    else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) out[name] = v.join(', ');
  }
  return out;
}

/** An HTTP field name (RFC 9110 section 5.1: a token). */
const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A character an HTTP field value may not hold (RFC 9110 section 5.5: CR, LF, NUL, other controls). */
const BAD_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * Why these headers cannot be sent as received (a name that is not a token, a control character or
 * CR/LF in a value), or undefined. A property of the delivery, not of the target: never retried.
 */
export function unsendable(headers: Record<string, string>): string | undefined {
  for (const name in headers) {
    if (!FIELD_NAME.test(name)) return `its header name ${JSON.stringify(name)} is not a valid HTTP name`;
    const bad = BAD_VALUE_CHAR.exec(headers[name]!);
    if (bad)
      return `its header ${name} holds ${JSON.stringify(bad[0])}, which HTTP does not allow in a value`;
  }
  return undefined;
}

/** The answer of the forward target. */
export interface ForwardResult {
  ok: boolean;
  status: number | null;
  error: string | null;
  /** From sending to the end of the answer. */
  ms: number;
  /** The start of the answer's body (at most EXCERPT_BYTES, as UTF-8), or null when it had none. */
  excerpt: string | null;
  /** The delivery itself cannot be sent as received (`unsendable`): nothing was sent, no retry helps. */
  unsendable?: true;
}

/** How much of the handler's answer is kept: enough to read an error, bounded whatever it sends. */
export const EXCERPT_BYTES = 2048;

/** Forwards to one URL: its connections are kept and reused; `close` ends them. */
export interface Forward {
  (body: Buffer, headers: Record<string, string>): Promise<ForwardResult>;
  close(): Promise<void>;
}

/** undici's codes for a target that took the connection and never answered. */
const NO_ANSWER = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * POSTs the exact bytes with the original headers to `url`; a 2xx answer is success. It never
 * rejects: a refused connection, a reset or no answer within `timeoutMs` is an error result. Through
 * undici's pool and its dispatch handler (of the answer's body only its first EXCERPT_BYTES are
 * kept, the rest dropped as it comes): under half the CPU of node:http's client per forward
 * (BENCHMARKS.md).
 */
export function forwardTo(url: URL, options: { timeoutMs?: number } = {}): Forward {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const path = `${url.pathname}${url.search}`;
  const added = new Map([['x-mkt-forwarded-by', `mkt/${VERSION}`]]);
  // Credentials in the URL (https://user:pass@host/hook) are sent as HTTP Basic, as node:http does.
  if (url.username || url.password)
    added.set(
      'authorization',
      `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`,
    );
  const addedList = [...added].flat();
  /**
   * The delivery's headers and ours (which replace any of the same name), as a flat [name, value, …]
   * list: undici takes it ~3 µs a forward cheaper than an object (BENCHMARKS.md).
   */
  const headerList = (headers: Record<string, string>): string[] => {
    const list: string[] = [];
    for (const name in headers)
      if (!added.has(name) && !HOP_BY_HOP.has(name)) list.push(name, headers[name]!);
    return list.concat(addedList);
  };
  const dispatch = (client: Pool, body: Buffer, headers: Record<string, string>) =>
    new Promise<ForwardResult>((resolve) => {
      const started = performance.now();
      const ms = () => Math.round((performance.now() - started) * 10) / 10;
      let status = 0;
      const kept: Buffer[] = [];
      let keptBytes = 0;
      const excerpt = () => (keptBytes ? Buffer.concat(kept).toString('utf8') : null);
      // undici's own handler interface (pinned version): its client calls these directly.
      client.dispatch(
        { path, method: 'POST', headers: headerList(headers), body },
        {
          onConnect() {},
          onHeaders(statusCode) {
            status = statusCode;
            return true;
          },
          onData(chunk: Buffer) {
            if (keptBytes < EXCERPT_BYTES) {
              const part = chunk.subarray(0, EXCERPT_BYTES - keptBytes);
              kept.push(Buffer.from(part));
              keptBytes += part.length;
            }
            return true;
          },
          onComplete() {
            resolve({ ok: status >= 200 && status < 300, status, error: null, ms: ms(), excerpt: excerpt() });
          },
          onError(err) {
            const { code, message } = err as NodeJS.ErrnoException;
            const error = NO_ANSWER.has(code!)
              ? `no answer within ${Math.round(timeoutMs / 1000)} s`
              : code && !code.startsWith('UND_ERR_')
                ? code // ECONNREFUSED, ECONNRESET…
                : message;
            resolve({ ok: false, status: status || null, error, ms: ms(), excerpt: excerpt() });
          },
        },
      );
    });
  let pool: Pool | undefined;
  let loading: Promise<Pool> | undefined;
  const load = async () =>
    (pool = new (await import('undici')).Pool(url.origin, {
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    }));
  const forward = (body: Buffer, headers: Record<string, string>): Promise<ForwardResult> => {
    const why = unsendable(headers);
    if (why) {
      const error = `not sent: ${why}`;
      return Promise.resolve({ ok: false, status: null, error, ms: 0, excerpt: null, unsendable: true });
    }
    return pool
      ? dispatch(pool, body, headers)
      : (loading ??= load()).then((client) => dispatch(client, body, headers));
  };
  return Object.assign(forward, { close: async () => (await loading)?.close() });
}

/**
 * A delivery forwarded this long after (or before: the sandbox's business clock moved on) its
 * envelope `timestamp` is restamped (docs/PROTOCOL.md,
 * Forwarding): a handler's replay window (5 minutes in the templates and Standard Webhooks) would
 * refuse it otherwise. One forwarded sooner goes as received, byte for byte.
 */
export const RESTAMP_AFTER_MS = 60_000;

/**
 * The bytes and headers to forward at `now`: as received while the envelope's `timestamp` is under
 * RESTAMP_AFTER_MS from `now`; else the same bytes with only that value replaced by `now` and
 * `X-Marketplace-Signature` made for them with `secret` (as the marketplace signs, src/wire/signing.ts),
 * as `stripe listen` signs each forward. The journal keeps what was received. A body that is not an
 * envelope, or without a secret to sign with, goes as received.
 */
export function restamp(
  secret: string | undefined,
  body: Buffer,
  headers: Record<string, string>,
  now: number,
): { body: Buffer; headers: Record<string, string> } {
  if (!secret) return { body, headers };
  let stamp: unknown;
  try {
    stamp = (JSON.parse(body.toString('utf8')) as { timestamp?: unknown } | null)?.timestamp;
  } catch {
    return { body, headers };
  }
  if (
    typeof stamp !== 'string' ||
    !/^[\x20-\x7e]+$/.test(stamp) ||
    !(Math.abs(now - Date.parse(stamp)) >= RESTAMP_AFTER_MS)
  )
    return { body, headers };
  // The value as serialized (`"timestamp":"…"`, compactly, docs/PROTOCOL.md): replaced in place when
  // it occurs exactly once; a body that holds it twice (in its data too) goes as received.
  const field = `"timestamp":${JSON.stringify(stamp)}`;
  const text = body.toString('utf8');
  const at = text.indexOf(field);
  if (at < 0 || text.indexOf(field, at + 1) >= 0) return { body, headers };
  const fresh = Buffer.from(
    `${text.slice(0, at)}"timestamp":${JSON.stringify(new Date(now).toISOString())}${text.slice(at + field.length)}`,
    'utf8',
  );
  return {
    body: fresh,
    headers: { ...headers, [HEADER.signature]: signBody(secret, fresh), [ORIGINAL_TIMESTAMP]: stamp },
  };
}

/** The header a restamped forward carries with the timestamp the marketplace sent (ours). */
export const ORIGINAL_TIMESTAMP = 'x-mkt-original-timestamp';
