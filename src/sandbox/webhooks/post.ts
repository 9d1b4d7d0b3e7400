import { RESPONSE_EXCERPT_BYTES } from '../console/delivery-records.js';

/** What one POST to a webhook URL came to: the answer's status or why there was none, its time, its start. */
export interface PostOutcome {
  /** When the attempt started (ms). */
  at: number;
  response_status: number | null;
  error: string | null;
  latency_ms: number;
  /** The first {@link RESPONSE_EXCERPT_BYTES} of the answer's body as text (null when there was none). */
  response_excerpt: string | null;
}

/**
 * POSTs a delivery and reads at most the first 2 KiB of the answer (the rest is not waited for).
 * `signal` aborts it (a timeout, or the sandbox stopping).
 */
export async function postDelivery(input: {
  url: string;
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
  now: () => number;
}): Promise<Omit<PostOutcome, 'error'> & { error: unknown }> {
  const at = input.now();
  const started = performance.now();
  const latency = () => Math.round((performance.now() - started) * 10) / 10;
  try {
    const res = await fetch(input.url, {
      method: 'POST',
      headers: input.headers,
      body: input.body,
      redirect: 'manual',
      signal: input.signal,
    });
    const latency_ms = latency();
    const excerpt = await readStart(res).catch(() => null);
    return { at, response_status: res.status, error: null, latency_ms, response_excerpt: excerpt };
  } catch (error) {
    return { at, response_status: null, error, latency_ms: latency(), response_excerpt: null };
  }
}

async function readStart(res: Response): Promise<string | null> {
  if (!res.body) return null;
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < RESPONSE_EXCERPT_BYTES) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  void reader.cancel().catch(() => undefined);
  if (size === 0) return null;
  const bytes = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES);
  return new TextDecoder('utf-8').decode(bytes);
}
