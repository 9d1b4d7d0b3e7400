import { createHash, randomBytes, randomFillSync, timingSafeEqual } from 'node:crypto';

// Identifiers draw from a pool of random bytes, refilled when spent (as crypto.randomUUID does): a
// year's advance makes 100,000 charge ids in one request. Secrets below take their own bytes.
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

// A sandbox seeded from a fixtures file draws its record ids from a stream made
// from the file's digest, so that two runs of one file give the same ids and answers
// (docs/DECISIONS.md, fixtures). Secrets, tokens, codes and anti-CSRF values stay random.
const RECORD_PREFIXES = new Set(['usr', 'app', 'cid', 'key', 'pay', 'dlv', 'acct']);
let stream: { seed: Buffer; counter: number; bytes: Buffer; at: number } | undefined;

/** Makes record ids follow `seed` from now on in this process (undefined: random again). */
export function useIdSeed(seed: string | undefined): void {
  stream =
    seed === undefined
      ? undefined
      : { seed: createHash('sha256').update(seed).digest(), counter: 0, bytes: Buffer.alloc(0), at: 0 };
}

function draw(n: number): Buffer {
  const s = stream!;
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) {
    if (s.at >= s.bytes.length) {
      s.bytes = createHash('sha256').update(s.seed).update(String(s.counter++)).digest();
      s.at = 0;
    }
    out[i] = s.bytes[s.at++]!;
  }
  return out;
}

/** A random identifier such as `usr_3f9a…`: the prefix, an underscore and `bytes` random bytes in hex. */
export function randomId(prefix: string, bytes = 10): string {
  if (stream && RECORD_PREFIXES.has(prefix)) return `${prefix}_${draw(bytes).toString('hex')}`;
  if (poolAt + bytes > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  poolAt += bytes;
  return `${prefix}_${pool.toString('hex', poolAt - bytes, poolAt)}`;
}

/** Compares two secrets in constant time (hashing first so unequal lengths leak nothing). */
export function secretsEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}

const DAY_MS = 86_400_000;
const TWO = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
const THREE = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
// The date part ("2026-11-26T") of the days stamped lately: a year's advance makes 200,000 stamps on
// a few hundred days, and Date#toISOString is most of their cost.
const dateParts = new Map<number, string>();

/** ISO 8601 UTC timestamp for a clock value in milliseconds (as Date#toISOString writes it). */
export function isoStamp(ms: number): string {
  // A fraction of a millisecond, or past the last valid time (the start of its "day"), as Date says.
  if (!Number.isInteger(ms) || ms >= 8.64e15) return new Date(ms).toISOString();
  const t = ((ms % DAY_MS) + DAY_MS) % DAY_MS;
  let datePart = dateParts.get(ms - t);
  if (datePart === undefined) {
    datePart = new Date(ms).toISOString().slice(0, -13); // throws on an invalid time, as before
    if (dateParts.size >= 1000) dateParts.clear();
    dateParts.set(ms - t, datePart);
  }
  const s = Math.floor(t / 1000);
  return `${datePart}${TWO[Math.floor(s / 3600)]}:${TWO[Math.floor(s / 60) % 60]}:${TWO[s % 60]}.${THREE[t % 1000]}Z`;
}

/** Generates a client secret (`cs_…`). */
export const newClientSecret = (): string => `cs_${randomBytes(24).toString('base64url')}`;
/** Generates a webhook signing secret (`whsec_…`). */
export const newWebhookSecret = (): string => `whsec_${randomBytes(24).toString('base64url')}`;
/** Generates an API key secret (`test_…` or `live_…`). */
export const newApiKey = (mode: 'test' | 'live'): string =>
  `${mode}_${randomBytes(24).toString('base64url')}`;
