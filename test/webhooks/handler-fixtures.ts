// Webhook handlers for `mkt webhooks test`: a correct one, and the same handler with one fault each,
// as real HTTP servers on 127.0.0.1. Each fault is a bug people ship (issue 52).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One way a handler is written wrong. */
export type Fault =
  /** Never checks the signature. */
  | 'signature_unchecked'
  /** Checks a signature only when there is one. */
  | 'signature_optional'
  /** Decodes the hex and compares buffers of unequal length: the compare throws, the server 500s. */
  | 'bad_hex_crashes'
  /** Parses the JSON first and verifies its serialization again, not the bytes received. */
  | 'parsed_before_verify'
  /** Never checks the timestamp. */
  | 'timestamp_unchecked'
  /** Checks only that the timestamp is not too old (now - t), never that it is not ahead. */
  | 'timestamp_past_only'
  /** Refuses a delivery id seen before (409). */
  | 'duplicate_refused'
  /** Processes a duplicate as new: the unique key of the row fails, 500. */
  | 'duplicate_500'
  /** Throws on an event it does not know (500). */
  | 'unknown_event_500'
  /** Validates data strictly: an unknown field is 422. */
  | 'strict_fields'
  /** Takes bodies up to 100 KB (express.json's and express.raw's default), else 413. */
  | 'small_body_limit'
  /** Does the work of a user.revoked before answering: 1.5 s. */
  | 'slow_revoke'
  /** Cancelling a subscription it has not seen created throws (500). */
  | 'out_of_order_500';

/** A running handler. */
export interface Handler {
  url: string;
  port: number;
  /** The parsed envelopes it accepted (2xx after a verified signature), in order. */
  accepted: Array<{ event: string; data: Record<string, unknown> }>;
  /** The size in bytes of each request body it received, in order. */
  sizes: number[];
  close(): Promise<void>;
}

/** Starts the handler with `faults` (none: the correct handler) on 127.0.0.1 (or `host`). */
export async function startHandler(
  secret: string,
  faults: Fault[] = [],
  options: { host?: string; port?: number; answer?: string } = {},
): Promise<Handler> {
  const has = (f: Fault) => faults.includes(f);
  const seen = new Set<string>();
  const subscribed = new Set<string>();
  const accepted: Handler['accepted'] = [];
  const sizes: number[] = [];
  const hmac = (bytes: Buffer | string) => createHmac('sha256', secret).update(bytes).digest();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      chunks.push(c);
    });
    req.on('end', () => {
      sizes.push(size);
      void (async () => {
        try {
          if (has('small_body_limit') && size > 100 * 1024)
            return res.writeHead(413).end('request entity too large');
          const body = Buffer.concat(chunks);
          const header = req.headers['x-marketplace-signature'];
          const signature = typeof header === 'string' ? header : undefined;
          let envelope: { event: string; timestamp: string; data: Record<string, unknown> };
          if (has('parsed_before_verify')) {
            envelope = JSON.parse(body.toString('utf8'));
            if (!verify(signature, Buffer.from(JSON.stringify(envelope))))
              return res.writeHead(401).end('bad signature');
          } else {
            const skip = has('signature_unchecked') || (has('signature_optional') && signature === undefined);
            if (!skip && !verify(signature, body))
              return res.writeHead(401).end(options.answer ?? 'bad signature');
            envelope = JSON.parse(body.toString('utf8'));
          }
          if (!has('timestamp_unchecked')) {
            const age = Date.now() - Date.parse(envelope.timestamp);
            const outside = has('timestamp_past_only') ? age > 300_000 : !(Math.abs(age) <= 300_000);
            if (outside) return res.writeHead(400).end('timestamp outside the tolerance');
          }
          const id = String(req.headers['x-marketplace-delivery']);
          if (seen.has(id)) {
            if (has('duplicate_refused')) return res.writeHead(409).end('already processed');
            // Processed as new: the row for this id is inserted again.
            if (has('duplicate_500')) throw new Error('duplicate key value violates unique constraint');
            return res.writeHead(204).end();
          }
          seen.add(id);
          await handle(envelope);
          accepted.push(envelope);
          res.writeHead(204).end();
        } catch (err) {
          // strict_fields answers as a web framework's validation does; anything else is a crash.
          const strict = (err as { strict?: string[] }).strict;
          if (strict) return res.writeHead(422).end(`unknown fields: ${strict.join(', ')}`);
          res.writeHead(500).end(`Internal Server Error: ${(err as Error).message}`);
        }
      })();
    });
  });

  /** The signature compared with the HMAC of `bytes`; bad_hex_crashes compares unequal lengths and throws. */
  function verify(signature: string | undefined, bytes: Buffer): boolean {
    if (signature === undefined) return false;
    if (has('bad_hex_crashes')) {
      const given = Buffer.from(signature.replace(/^sha256=/, ''), 'hex');
      return timingSafeEqual(given, hmac(bytes)); // throws RangeError when the hex was not hex
    }
    const expected = Buffer.from(`sha256=${hmac(bytes).toString('hex')}`);
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  async function handle(e: { event: string; data: Record<string, unknown> }): Promise<void> {
    const known: Record<string, string[]> = {
      'user.authorized': ['user_id', 'app_id', 'scopes'],
      'user.revoked': ['user_id', 'app_id', 'scopes'],
      'subscription.created': ['user_id', 'plan'],
      'subscription.cancelled': ['user_id', 'plan', 'cancelled_at', 'reason'],
    };
    const fields = known[e.event];
    if (!fields) {
      if (has('unknown_event_500')) throw new Error(`unhandled event ${e.event}`);
      return;
    }
    if (has('strict_fields')) {
      const extra = Object.keys(e.data).filter((k) => !fields.includes(k));
      if (extra.length) throw Object.assign(new Error(), { strict: extra });
    }
    const user = String(e.data.user_id);
    if (e.event === 'subscription.created') subscribed.add(user);
    if (e.event === 'subscription.cancelled') {
      if (!subscribed.has(user) && has('out_of_order_500')) throw new Error(`no subscription for ${user}`);
      subscribed.delete(user);
    }
    if (e.event === 'user.revoked' && has('slow_revoke')) await new Promise((r) => setTimeout(r, 1500));
  }

  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve),
  );
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    accepted,
    sizes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
