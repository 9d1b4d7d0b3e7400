import { createHmac } from 'node:crypto';

/**
 * The `X-Marketplace-Signature` value for a raw body: `sha256=` and the lowercase hex HMAC-SHA256
 * keyed by the UTF-8 bytes of the secret. Defined once for both halves: the sandbox signs with it,
 * the CLI verifies with it.
 */
export function signBody(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex')}`;
}
