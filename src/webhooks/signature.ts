import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { humanDuration } from '../output/duration.js';

/** Signatures are `sha256=` and 64 lowercase (or uppercase) hex digits. */
export const SIGNATURE_PATTERN = /^sha256=[0-9a-fA-F]{64}$/;

export { signBody } from '../wire/signing.js';

/**
 * A well-formed signature header as `sha256=` and lowercase hex: every copy of one signed body
 * carries it (a replay key), and only the secret's holder can make it for another body. A header
 * already in that form is its own key: V8 gives back the same string, no copy.
 */
export function signatureKey(header: string): string {
  return header.trim().toLowerCase();
}

/** The key of the secret last verified with: listen verifies every delivery with the same one. */
let lastKey: { secret: string; key: KeyObject } | undefined;

/** True when `header` is a well-formed signature of `body` under `secret`, compared in constant time. */
export function verifySignature(secret: string, body: string | Buffer, header: string | undefined): boolean {
  const value = header?.trim();
  return !!value && SIGNATURE_PATTERN.test(value) && signs(secret, body, value);
}

/** True when the well-formed signature `value` is the HMAC of `body` under `secret`. */
function signs(secret: string, body: string | Buffer, value: string): boolean {
  const given = Buffer.from(value.slice('sha256='.length), 'hex');
  if (lastKey?.secret !== secret) lastKey = { secret, key: createSecretKey(Buffer.from(secret, 'utf8')) };
  const expected = createHmac('sha256', lastKey.key).update(body).digest();
  return timingSafeEqual(given, expected);
}

/** A parsed webhook envelope `{event, timestamp, data}`. */
export interface Envelope {
  event: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** Why a delivery is refused; `undefined` when it is acceptable. */
export type RefusalReason =
  | 'missing_signature'
  | 'malformed_signature'
  | 'bad_signature'
  | 'malformed_json'
  | 'malformed_envelope'
  | 'stale_timestamp';

/** The result of checking one delivery's bytes: the envelope when good, else the reason. */
export type CheckResult =
  | { ok: true; envelope: Envelope; ageSeconds: number }
  | { ok: false; reason: RefusalReason; message: string; envelope?: Envelope };

/** Parses the bytes as an envelope, or says why they are not one. */
export function parseEnvelope(body: string | Buffer): Envelope | { reason: RefusalReason; message: string } {
  const read = readEnvelope(body);
  return 'reason' in read ? read : read.envelope;
}

/** The envelope in the bytes and its timestamp in ms, or why they are not one. */
function readEnvelope(
  body: string | Buffer,
): { envelope: Envelope; time: number } | { reason: RefusalReason; message: string } {
  let value: unknown;
  try {
    value = JSON.parse(body.toString());
  } catch (err) {
    return { reason: 'malformed_json', message: `The body is not JSON: ${(err as Error).message}` };
  }
  const e = value as Partial<Envelope> | null;
  const time = typeof e?.timestamp === 'string' ? Date.parse(e.timestamp) : NaN;
  if (
    !e ||
    typeof e !== 'object' ||
    Array.isArray(e) ||
    typeof e.event !== 'string' ||
    Number.isNaN(time) ||
    !e.data ||
    typeof e.data !== 'object' ||
    Array.isArray(e.data)
  ) {
    return {
      reason: 'malformed_envelope',
      message: 'The body is not an envelope {event: string, timestamp: ISO 8601, data: object}.',
    };
  }
  return { envelope: e as Envelope, time };
}

/** Checks signature (over the exact bytes), envelope shape and, when `toleranceSeconds` is set, the timestamp. */
export function checkDelivery(input: {
  secret: string;
  body: string | Buffer;
  signature: string | undefined;
  now: number;
  toleranceSeconds?: number;
}): CheckResult {
  if (!input.signature)
    return { ok: false, reason: 'missing_signature', message: 'No X-Marketplace-Signature header.' };
  const signature = input.signature.trim();
  if (!SIGNATURE_PATTERN.test(signature)) {
    return {
      ok: false,
      reason: 'malformed_signature',
      message: 'The signature header is not "sha256=" followed by 64 hex digits.',
    };
  }
  if (!signs(input.secret, input.body, signature)) {
    return {
      ok: false,
      reason: 'bad_signature',
      message: 'The signature does not match the body and secret.',
    };
  }
  const read = readEnvelope(input.body);
  if ('reason' in read) return { ok: false, ...read };
  const { envelope } = read;
  const ageSeconds = Math.round((input.now - read.time) / 1000);
  if (input.toleranceSeconds !== undefined && Math.abs(ageSeconds) > input.toleranceSeconds) {
    return {
      ok: false,
      reason: 'stale_timestamp',
      envelope,
      message: `The timestamp ${envelope.timestamp} is ${humanDuration(ageSeconds)} ${ageSeconds >= 0 ? 'old' : 'in the future'}, outside the window of ${humanDuration(input.toleranceSeconds)}.`,
    };
  }
  return { ok: true, envelope, ageSeconds };
}

/** Why a valid-looking signature fails: the body was re-serialized (another form verifies), or the secret is wrong. */
export function diagnoseMismatch(
  secret: string,
  body: string,
  signature: string,
): 'reserialized' | 'wrong_secret' {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return 'wrong_secret';
  }
  const variants = [
    JSON.stringify(parsed),
    JSON.stringify(parsed, null, 2),
    JSON.stringify(parsed, null, 4),
    JSON.stringify(parsed, null, '\t'),
    JSON.stringify(sortKeys(parsed)),
    JSON.stringify(sortKeys(parsed), null, 2),
    ...(body.endsWith('\n') ? [body.replace(/\r?\n$/, '')] : [`${body}\n`]),
  ];
  return variants.some((v) => v !== body && verifySignature(secret, v, signature))
    ? 'reserialized'
    : 'wrong_secret';
}

/** Sorts object keys recursively (a canonical form). */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}
