// The context token the marketplace's dashboard gives an embedded app (docs/DECISIONS.md, "Embedded
// apps"): a JWT (RFC 7519) signed HS256 (RFC 7518 §3.2) with the app's client secret. The sandbox signs
// with this module and `mkt apps verify-context-token` verifies with it, so both read one definition.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** The query parameter of the embed URL that carries the token. */
export const CONTEXT_TOKEN_PARAM = 'context_token';

/** A context token lives five minutes (`exp` = `iat` + 300). */
export const CONTEXT_TOKEN_TTL_S = 300;

/** The only algorithm a context token uses; anything else (`none` above all) is refused. */
export const CONTEXT_TOKEN_ALG = 'HS256';

/** The claims of a context token. */
export interface ContextClaims {
  /** The site URL of the marketplace that signed it. */
  iss: string;
  /** The client id of the app it was made for. */
  aud: string;
  /** The user the app is shown to. */
  sub: string;
  app_id: string;
  /** Seconds since the epoch (real time, never the sandbox's business clock). */
  iat: number;
  nbf: number;
  exp: number;
  /** A unique id, so that an app may refuse a token it has already seen. */
  jti: string;
  [claim: string]: unknown;
}

/** Why a token does not verify; each failure names one. */
export type ContextTokenReason =
  | 'not_a_jwt'
  | 'wrong_algorithm'
  | 'bad_signature'
  | 'invalid_claims'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'not_yet_valid'
  | 'expired';

/** A failed check: the reason, one sentence, and for a time check how far off it is. */
export interface ContextTokenFailure {
  ok: false;
  reason: ContextTokenReason;
  message: string;
  /** For `expired` and `not_yet_valid`: seconds past `exp`, or seconds until `nbf`. */
  seconds?: number;
}

/** A token split into its parts; nothing in it is trusted until the signature is checked. */
export interface DecodedContextToken {
  ok: true;
  header: Record<string, unknown>;
  /** The claims as the token states them (not yet checked). */
  payload: Record<string, unknown>;
  /** `header.payload`, the bytes the signature covers. */
  signingInput: string;
  signature: Buffer;
}

/** What a token is checked against. */
export interface ContextTokenExpectations {
  secret: string;
  /** The site URL the token must name in `iss` (a trailing slash does not matter). */
  issuer: string;
  /** The client id the token must name in `aud`. */
  audience: string;
  /** Now, in seconds since the epoch. */
  nowS: number;
  /** Seconds of clock difference forgiven on `exp` and `nbf` (default 0). */
  toleranceS?: number;
}

const b64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');
const hmac = (secret: string, input: string) =>
  createHmac('sha256', Buffer.from(secret, 'utf8')).update(input).digest();

/** Signs a context token for `claims`, valid from `nowS` for CONTEXT_TOKEN_TTL_S seconds. */
export function signContextToken(
  secret: string,
  claims: { iss: string; aud: string; sub: string; app_id: string },
  nowS: number,
): string {
  const iat = Math.floor(nowS);
  const payload: ContextClaims = {
    ...claims,
    iat,
    nbf: iat,
    exp: iat + CONTEXT_TOKEN_TTL_S,
    jti: randomBytes(16).toString('base64url'),
  };
  const signingInput = `${b64url(JSON.stringify({ alg: CONTEXT_TOKEN_ALG, typ: 'JWT' }))}.${b64url(JSON.stringify(payload))}`;
  return `${signingInput}.${b64url(hmac(secret, signingInput))}`;
}

const fail = (reason: ContextTokenReason, message: string, seconds?: number): ContextTokenFailure =>
  seconds === undefined ? { ok: false, reason, message } : { ok: false, reason, message, seconds };

/** Decodes one base64url JSON object, or says what it is not. */
function jsonPart(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Splits a token into header, claims and signature without trusting any of it. */
export function decodeContextToken(input: string): DecodedContextToken | ContextTokenFailure {
  const token = input.trim();
  if (token === '') return fail('not_a_jwt', 'The token is empty.');
  if (/%2e|%2E/.test(token)) {
    return fail(
      'not_a_jwt',
      'The token is still URL-encoded ("%2E" for "."): decode the query parameter first.',
    );
  }
  const parts = token.split('.');
  if (parts.length !== 3) {
    const what = parts.length === 5 ? 'an encrypted JWT (JWE)' : `${parts.length} part(s)`;
    return fail('not_a_jwt', `The token has ${what}; a signed JWT has three, header.payload.signature.`);
  }
  const bad = parts.findIndex((p) => !/^[A-Za-z0-9_-]*$/.test(p));
  if (bad !== -1) {
    const name = ['header', 'payload', 'signature'][bad];
    const hint = /[+/=]/.test(parts[bad]!) ? ' (it looks like base64, not base64url)' : '';
    return fail('not_a_jwt', `The token's ${name} is not base64url${hint}.`);
  }
  const header = jsonPart(parts[0]!);
  if (!header) return fail('not_a_jwt', "The token's header is not a base64url JSON object.");
  const payload = jsonPart(parts[1]!);
  if (!payload) return fail('not_a_jwt', "The token's payload is not a base64url JSON object.");
  return {
    ok: true,
    header,
    payload,
    signingInput: `${parts[0]}.${parts[1]}`,
    signature: Buffer.from(parts[2]!, 'base64url'),
  };
}

/** True when `secret` made the token's signature (compared in constant time). */
export function signatureMatches(decoded: DecodedContextToken, secret: string): boolean {
  const expected = hmac(secret, decoded.signingInput);
  return decoded.signature.length === expected.length && timingSafeEqual(decoded.signature, expected);
}

/** The length in bytes of an HS256 signature. */
export const HS256_SIGNATURE_BYTES = 32;

/** "4 min 12 s" for 252. */
export function duration(seconds: number): string {
  const s = Math.round(Math.abs(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  const m = Math.floor((s % 3600) / 60);
  return `${Math.floor(s / 3600)} h${m ? ` ${m} min` : ''}`;
}

/** An ISO 8601 time for seconds since the epoch (the number itself when out of range). */
export const iso = (s: number) => (Math.abs(s) < 8.64e12 ? new Date(s * 1000).toISOString() : String(s));

/** A value from a token, quoted (JSON escapes) and cut, for a sentence; a terminal escapes the rest. */
export function quote(value: unknown): string {
  const text = typeof value === 'string' ? value : String(JSON.stringify(value));
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');

/** The claims every context token must carry, with their types, or the first one that is wrong. */
function checkClaimTypes(p: Record<string, unknown>): ContextTokenFailure | undefined {
  for (const name of ['iss', 'sub', 'app_id', 'jti'] as const) {
    if (typeof p[name] !== 'string' || p[name] === '')
      return fail('invalid_claims', `The token has no "${name}" claim (a non-empty string).`);
  }
  const aud = p.aud;
  if (!(typeof aud === 'string' || (Array.isArray(aud) && aud.every((a) => typeof a === 'string'))))
    return fail('invalid_claims', 'The token has no "aud" claim (the client id).');
  for (const name of ['iat', 'nbf', 'exp'] as const) {
    if (typeof p[name] !== 'number' || !Number.isFinite(p[name]))
      return fail('invalid_claims', `The token has no "${name}" claim (seconds since the epoch).`);
  }
  return undefined;
}

/**
 * Checks a token as any JWT library would (structure, algorithm, signature, then the claims), and
 * answers the claims or the first reason it fails with a sentence that says why.
 */
export function verifyContextToken(
  token: string,
  expect: ContextTokenExpectations,
): { ok: true; header: Record<string, unknown>; claims: ContextClaims } | ContextTokenFailure {
  const decoded = decodeContextToken(token);
  if (!decoded.ok) return decoded;
  const { header, payload } = decoded;
  if (header.alg !== CONTEXT_TOKEN_ALG) {
    return fail(
      'wrong_algorithm',
      typeof header.alg === 'string' && header.alg.toLowerCase() === 'none'
        ? 'The token is unsigned ("alg": "none"); a context token is always signed HS256, so it is refused.'
        : `The token says "alg": ${quote(header.alg)}; a context token is signed HS256 only.`,
    );
  }
  if (header.crit !== undefined)
    return fail('wrong_algorithm', 'The token\'s header has "crit" extensions this verifier does not know.');
  if (!signatureMatches(decoded, expect.secret)) {
    return decoded.signature.length === HS256_SIGNATURE_BYTES
      ? fail('bad_signature', 'The signature does not match the secret.')
      : fail(
          'bad_signature',
          `The signature is ${decoded.signature.length} bytes where HS256 makes ${HS256_SIGNATURE_BYTES}: the token was cut or changed on its way.`,
        );
  }
  const typeError = checkClaimTypes(payload);
  if (typeError) return typeError;
  const claims = payload as ContextClaims;
  if (trimSlash(claims.iss) !== trimSlash(expect.issuer)) {
    return fail(
      'wrong_issuer',
      `The token was issued by ${quote(claims.iss)}, not by ${quote(expect.issuer)}.`,
    );
  }
  const audiences = Array.isArray(claims.aud) ? (claims.aud as string[]) : [claims.aud];
  if (!audiences.includes(expect.audience)) {
    return fail(
      'wrong_audience',
      `The token was made for client ${audiences.map(quote).join(', ')}, not for ${quote(expect.audience)}.`,
    );
  }
  const tolerance = expect.toleranceS ?? 0;
  if (claims.nbf > expect.nowS + tolerance) {
    const ahead = claims.nbf - expect.nowS;
    return fail(
      'not_yet_valid',
      `The token is not valid for another ${duration(ahead)} (nbf ${iso(claims.nbf)}): the signer's clock is ahead of this one.`,
      ahead,
    );
  }
  if (claims.exp <= expect.nowS - tolerance) {
    const late = expect.nowS - claims.exp;
    return fail('expired', `The token expired ${duration(late)} ago (exp ${iso(claims.exp)}).`, late);
  }
  return { ok: true, header, claims };
}
