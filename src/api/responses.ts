// What the API client makes of an answer: its body, its error, how long to wait before a retry, and
// the deadline MKT_HTTP_TIMEOUT sets for a whole request (retries included).
import type { HttpResponse } from './transport.js';

export function parseBody(res: HttpResponse): unknown {
  if (!res.text) return undefined;
  const type = String(res.headers['content-type'] ?? '');
  if (!type.includes('json') && !/^\s*[[{]/.test(res.text)) return undefined;
  try {
    return JSON.parse(res.text);
  } catch {
    return undefined;
  }
}

/** Understands our error JSON, OAuth errors and `{message}`; anything else is status plus an excerpt. */
export function describeError(res: HttpResponse, data: unknown): { code: string; message: string } {
  const body = data as Record<string, unknown> | undefined;
  const err = body?.error;
  if (err && typeof err === 'object') {
    const e = err as Record<string, unknown>;
    return { code: String(e.code ?? ''), message: String(e.message ?? e.code ?? `HTTP ${res.status}`) };
  }
  if (typeof err === 'string') {
    const description = typeof body?.error_description === 'string' ? `: ${body.error_description}` : '';
    return { code: err, message: `${err}${description}` };
  }
  if (typeof body?.message === 'string') return { code: '', message: body.message };
  return { code: '', message: `HTTP ${res.status}${excerpt(res.text)}` };
}

/** ': ' and the first 200 characters of a body's text (HTML tags dropped), or nothing. */
export function excerpt(text: string): string {
  const plain = text
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (!plain) return '';
  return `: ${plain.length > 200 ? `${plain.slice(0, 200)}…` : plain}`;
}

/** Retry-After in ms (seconds or an HTTP date), or undefined. */
export function retryAfterMs(
  headers: Record<string, string | string[] | undefined>,
  now: number,
): number | undefined {
  const value = headers['retry-after'];
  if (typeof value !== 'string' || !value.trim()) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

/** Exponential backoff with full jitter: 0.5–1 × 250 ms × 2^attempt, at most 8 s. */
export function backoff(attempt: number): number {
  const base = Math.min(8000, 250 * 2 ** attempt);
  return base / 2 + Math.random() * (base / 2);
}

/** MKT_HTTP_TIMEOUT in ms: the time a whole request may take, retries included (default 30 s). */
export function timeoutFromEnv(env: Record<string, string | undefined>): number | undefined {
  const seconds = Number(env.MKT_HTTP_TIMEOUT);
  return env.MKT_HTTP_TIMEOUT && Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
}
