import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A random identifier such as `usr_3f9a…`: the prefix, an underscore and `bytes` random bytes in hex. */
export function randomId(prefix: string, bytes = 10): string {
  return `${prefix}_${randomBytes(bytes).toString('hex')}`;
}

/** Compares two secrets in constant time (hashing first so unequal lengths leak nothing). */
export function secretsEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}

// The last two stamps made: a renewal writes its time, its new expiry, then its time again.
let lastMs = NaN;
let lastStamp = '';
let otherMs = NaN;
let otherStamp = '';

/** ISO 8601 UTC timestamp for a clock value in milliseconds. */
export function isoStamp(ms: number): string {
  if (ms === lastMs) return lastStamp;
  const stamp = ms === otherMs ? otherStamp : new Date(ms).toISOString();
  otherMs = lastMs;
  otherStamp = lastStamp;
  lastMs = ms;
  lastStamp = stamp;
  return stamp;
}

/** Generates a client secret (`cs_…`). */
export const newClientSecret = (): string => `cs_${randomBytes(24).toString('base64url')}`;
/** Generates a webhook signing secret (`whsec_…`). */
export const newWebhookSecret = (): string => `whsec_${randomBytes(24).toString('base64url')}`;
/** Generates an API key secret (`test_…` or `live_…`). */
export const newApiKey = (mode: 'test' | 'live'): string =>
  `${mode}_${randomBytes(24).toString('base64url')}`;
