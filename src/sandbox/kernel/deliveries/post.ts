import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { RESPONSE_EXCERPT_BYTES } from './delivery-records.js';

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

// A connection is kept for the next delivery to the same server for a second at most: long enough
// for a burst, shorter than servers keep an idle connection (Node's 5 s), so that a delivery never
// goes out on a connection the server is closing.
const agents: Record<string, HttpAgent> = {
  'http:': new HttpAgent({ keepAlive: true, timeout: 1_000 }),
  'https:': new HttpsAgent({ keepAlive: true, timeout: 1_000 }),
};

/**
 * POSTs a delivery and reads at most the first 2 KiB of the answer (the rest is not waited for).
 * `signal` aborts it (a timeout, or the sandbox stopping). Node's own HTTP client, not fetch: a
 * year's advance sends hundreds of deliveries, and fetch costs several times the CPU per request.
 */
export function postDelivery(input: {
  url: string;
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
  now: () => number;
}): Promise<Omit<PostOutcome, 'error'> & { error: unknown }> {
  const at = input.now();
  const started = performance.now();
  const latency = () => Math.round((performance.now() - started) * 10) / 10;
  return new Promise((resolve) => {
    // Set once the status has come: what follows (the body cut off, the timeout) leaves it standing.
    let answered: (() => void) | undefined;
    const failed = (error: unknown) =>
      answered
        ? answered()
        : resolve({ at, response_status: null, error, latency_ms: latency(), response_excerpt: null });
    try {
      const url = new URL(input.url);
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const headers = { ...input.headers, 'content-length': String(Buffer.byteLength(input.body)) };
      const req = send(url, { method: 'POST', headers, signal: input.signal, agent: agents[url.protocol] });
      req.on('error', failed);
      req.on('response', (res) => {
        const latency_ms = latency();
        const chunks: Buffer[] = [];
        let size = 0;
        answered = () => {
          const excerpt =
            size === 0 ? null : Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8');
          resolve({
            at,
            response_status: res.statusCode!,
            error: null,
            latency_ms,
            response_excerpt: excerpt,
          });
        };
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.byteLength;
          if (size >= RESPONSE_EXCERPT_BYTES) {
            answered!();
            res.destroy();
          }
        });
        res.on('end', answered);
        res.on('error', failed);
      });
      req.end(input.body);
    } catch (error) {
      failed(error);
    }
  });
}
