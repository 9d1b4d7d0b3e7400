import { HEADER } from '../../wire.js';
import type { DeliveryRecord } from '../storage/records.js';

/** The User-Agent of webhook deliveries. */
export const USER_AGENT = 'mkt-sandbox/0.1.0';

/** The headers every delivery carries (lowercase, as relayed on the stream). */
export function outboundHeaders(d: DeliveryRecord): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    [HEADER.signature]: d.signature,
    [HEADER.delivery]: d.id,
    [HEADER.event]: d.event,
  };
}
