// A webhook delivery as the marketplace makes it (docs/PROTOCOL.md, Webhook deliveries): the
// envelope's bytes, the headers and the limits. Defined once: the sandbox sends with it, and
// `mkt webhooks test` builds its battery with it.
import { HEADER } from '../wire.js';
import { signBody } from './signing.js';

/** The User-Agent of webhook deliveries. */
export const USER_AGENT = 'mkt-sandbox/0.1.0';

/** How long the marketplace waits for a handler's answer before it counts the attempt as failed. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** The largest delivery body, in bytes: a handler must take one of this size. */
export const MAX_DELIVERY_BYTES = 1024 * 1024;

/** The replay window receivers keep by default: a timestamp further than this from now is refused. */
export const TIMESTAMP_TOLERANCE_S = 300;

/** The envelope's bytes: `{"event", "timestamp", "data"}` serialized once, compactly, in that order. */
export function envelopeBody(event: string, timestamp: string, data: unknown): string {
  return JSON.stringify({ event, timestamp, data });
}

/** What a delivery's headers are made from. */
export interface DeliveryHead {
  id: string;
  event: string;
  signature: string;
  simulated?: 'synthetic';
}

/** The headers every delivery carries (lowercase, as relayed on the stream). */
export function outboundHeaders(d: DeliveryHead): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    [HEADER.signature]: d.signature,
    [HEADER.delivery]: d.id,
    [HEADER.event]: d.event,
    ...(d.simulated ? { [HEADER.simulated]: d.simulated } : {}),
  };
}

/** A delivery's body and headers, signed with `secret` over the exact bytes. */
export function signedDelivery(
  secret: string,
  d: { id: string; event: string; timestamp: string; data: unknown },
): { body: string; headers: Record<string, string> } {
  const body = envelopeBody(d.event, d.timestamp, d.data);
  return { body, headers: outboundHeaders({ id: d.id, event: d.event, signature: signBody(secret, body) }) };
}
