import http from 'node:http';
import https from 'node:https';
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

const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

/** POSTs the exact bytes with the original headers to `url`; a 2xx answer is success. Never throws. */
export function forwardDelivery(
  url: URL,
  body: string | Buffer,
  headers: Record<string, string>,
  options: { timeoutMs?: number } = {},
): Promise<ForwardResult> {
  const started = performance.now();
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const secure = url.protocol === 'https:';
  return new Promise((resolve) => {
    let settled = false;
    const finish = (status: number | null, error: string | null) => {
      if (settled) return;
      settled = true;
      const ok = status !== null && status >= 200 && status < 300;
      resolve({ ok, status, error, ms: Math.round((performance.now() - started) * 10) / 10 });
    };
    const req = (secure ? https : http).request(url, {
      method: 'POST',
      agent: secure ? agents.https : agents.http,
      headers: {
        ...headers,
        'content-length': String(bytes.length),
        'x-mkt-forwarded-by': `mkt/${VERSION}`,
      },
      timeout: options.timeoutMs ?? 10_000,
    });
    req.on('timeout', () => {
      req.destroy();
      finish(null, `no answer within ${Math.round((options.timeoutMs ?? 10_000) / 1000)} s`);
    });
    req.on('error', (err: NodeJS.ErrnoException) => finish(null, err.code ?? err.message));
    req.on('response', (res) => {
      res.resume(); // the body is not needed; reading it frees the socket for the next forward
      res.on('end', () => finish(res.statusCode ?? null, null));
      res.on('error', (err) => finish(res.statusCode ?? null, err.message));
    });
    req.end(bytes);
  });
}
