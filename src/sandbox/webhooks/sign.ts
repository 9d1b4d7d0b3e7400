import { HEADER } from '../../wire.js';
import { createHmac } from 'node:crypto';
import type { DeliveryRecord } from '../storage/records.js';

/** The User-Agent of webhook deliveries. */
export const USER_AGENT = 'mkt-sandbox/0.1.0';

/** `sha256=` + lowercase hex HMAC-SHA256 of the raw body, keyed by the UTF-8 bytes of the secret. */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body, 'utf8').digest('hex')}`;
}

/** The headers every delivery carries (lowercase, as relayed on the stream). */
export function deliveryHeaders(d: DeliveryRecord): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    [HEADER.signature]: d.signature,
    [HEADER.delivery]: d.id,
    [HEADER.event]: d.event,
  };
}
