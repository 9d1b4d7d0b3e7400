import { HEADER } from '../wire.js';
/** Secret shapes the marketplace uses; any string that looks like one is redacted in logs. */
const SECRET_VALUE = /\b(at_|rt_|test_|live_|whsec_|cs_|code_)[A-Za-z0-9_-]{4,}/g;
const SECRET_KEY = /(secret|token|password|authorization|api[-_]?key|code_verifier|signature)/i;
const SECRET_HEADERS = new Set([
  'authorization',
  HEADER.apiKey,
  'proxy-authorization',
  'cookie',
  'set-cookie',
]);

/** A URL as printed: a password in it (https://user:pass@host/) shown as `***`. */
export function redactUrl(href: string): string {
  const url = URL.canParse(href) ? new URL(href) : undefined;
  if (!url?.password) return href;
  url.password = '***';
  return url.href;
}

/** Replaces every secret-looking value in free text. */
function redactText(text: string): string {
  return text.replace(SECRET_VALUE, (_m, prefix: string) => `${prefix}[redacted]`);
}

/** A copy of headers safe to print. */
export function redactHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(', ') : value;
    out[name] = SECRET_HEADERS.has(name.toLowerCase()) ? '[redacted]' : redactText(text);
  }
  return out;
}

/** A copy of a JSON value with secret fields and secret-looking strings redacted. */
function redactJson(value: unknown, key = '', depth = 0): unknown {
  // A top-level `code` is an OAuth authorization code; a nested one is an error code.
  // Metadata names such as `token_endpoint` are addresses, not secrets.
  const secretKey =
    (SECRET_KEY.test(key) && !/_endpoint$|_supported$/.test(key)) || (depth === 1 && key === 'code');
  if (typeof value === 'string') return secretKey ? '[redacted]' : redactText(value);
  if (Array.isArray(value)) return value.map((v) => redactJson(v, key, depth));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactJson(v, k, depth + 1)]));
  }
  return value;
}

/** Redacts a request or response body for `--verbose`: JSON field-aware, form-aware, else text. */
export function redactBody(text: string): string {
  if (!text) return text;
  try {
    return JSON.stringify(redactJson(JSON.parse(text)));
  } catch {
    if (/^[\w.%-]+=[^&]*(&[\w.%-]+=[^&]*)*$/.test(text)) {
      const params = new URLSearchParams(text);
      for (const [k] of params) if (SECRET_KEY.test(k) || k === 'code') params.set(k, '[redacted]');
      return redactText(params.toString());
    }
    return redactText(text);
  }
}
