// @ts-check
// Everything this app needs of the marketplace: its settings, OAuth sign-in (code flow with PKCE
// and state), the identity and entitlement API, webhook signatures and the embedded page's context
// token. Plain JavaScript with JSDoc types: it runs as written on Node 20, 22 and 24, with no build
// step and no flag (your editor checks the types: `// @ts-check`).
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { jwtVerify } from 'jose';

// The settings come from the environment, else from .env (written by `mkt init`, never committed):
// a variable already set wins, so `mkt sandbox exec -- npm test` gives the sandbox's own.
try {
  process.loadEnvFile(new URL('../.env', import.meta.url));
} catch (err) {
  if (/** @type {NodeJS.ErrnoException} */ (err).code !== 'ENOENT') throw err;
}
/** mkt.json (committed) names the port the app is registered with. */
const project = JSON.parse(readFileSync(new URL('../mkt.json', import.meta.url), 'utf8'));

/** @param {string} name */
function required(name) {
  const value = process.env[name];
  if (!value)
    throw new Error(
      `${name} is not set: run the app from its folder (with its .env), under \`mkt sandbox exec\`, or run \`mkt init\` again.`,
    );
  return value;
}

export const settings = {
  siteUrl: required('MKT_SITE_URL').replace(/\/+$/, ''),
  clientId: required('MKT_CLIENT_ID'),
  clientSecret: required('MKT_CLIENT_SECRET'),
  webhookSecret: required('MKT_WEBHOOK_SECRET'),
  /** Signs the session cookie: kept in .env, so a restart keeps everyone signed in. */
  sessionSecret: process.env.SESSION_SECRET || randomBytes(32).toString('base64url'),
  port: Number(process.env.PORT || project.port),
  /** The feature a paid plan grants (`mkt plans create --feature …`). */
  paidFeature: process.env.PAID_FEATURE ?? 'pro',
};
export const appUrl = `http://localhost:${settings.port}`;
export const redirectUri = `${appUrl}/callback`;
const apiUrl = `${settings.siteUrl}/api/v1`;

/** @typedef {{ authorization_endpoint: string, token_endpoint: string }} Metadata */
/** @type {Promise<Metadata> | undefined} */
let metadata;
/** The marketplace's OAuth endpoints, from its RFC 8414 metadata (read once). */
function endpoints() {
  metadata ??= fetch(`${settings.siteUrl}/.well-known/oauth-authorization-server`).then(async (res) => {
    if (!res.ok) throw new Error(`OAuth metadata answered HTTP ${res.status}`);
    return /** @type {Metadata} */ (await res.json());
  });
  return metadata;
}

/** @param {Buffer} bytes */
const base64url = (bytes) => bytes.toString('base64url');

/**
 * Where to send the person to sign in, and what the callback must check.
 * @returns {Promise<{ url: string, state: string, verifier: string }>}
 */
export async function startSignIn() {
  const state = base64url(randomBytes(24));
  const verifier = base64url(randomBytes(32));
  const url = new URL((await endpoints()).authorization_endpoint);
  url.search = new URLSearchParams({
    client_id: settings.clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'identity:read entitlements:read',
    state,
    code_challenge: base64url(createHash('sha256').update(verifier).digest()),
    code_challenge_method: 'S256',
  }).toString();
  return { url: url.toString(), state, verifier };
}

/** The marketplace refused the sign-in (a used or expired code, a wrong verifier): the person may try again. */
export class SignInRefused extends Error {}

/**
 * Exchanges the callback's code for an access token.
 * @param {string} code
 * @param {string} verifier
 * @returns {Promise<string>}
 */
export async function finishSignIn(code, verifier) {
  const res = await fetch((await endpoints()).token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      client_id: settings.clientId,
      client_secret: settings.clientSecret,
      code_verifier: verifier,
    }),
  });
  const body = /** @type {{ access_token?: string, error?: string }} */ (await res.json().catch(() => ({})));
  if (res.status >= 400 && res.status < 500) throw new SignInRefused(body.error ?? `HTTP ${res.status}`);
  if (!res.ok || !body.access_token)
    throw new Error(`The token exchange failed: ${body.error ?? `HTTP ${res.status}`}`);
  return body.access_token;
}

/** @typedef {{ id: string, name: string, email: string }} User */
/** @typedef {{ plan: string, status?: string, features: string[] }} Entitlement */

/**
 * GET {base_url}{path} as the signed-in user; null when the marketplace answers 404.
 * @template T
 * @param {string} path
 * @param {string} token
 * @returns {Promise<T | null>}
 */
async function api(path, token) {
  const res = await fetch(`${apiUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status === 404) return null;
  if (!res.ok) throw new Error(`GET ${path} answered HTTP ${res.status}`);
  return /** @type {T} */ (await res.json());
}
/** @param {string} token @returns {Promise<User | null>} */
export const whoami = (token) => api('/whoami', token);
/** @param {string} token @returns {Promise<Entitlement | null>} */
export const entitlements = (token) => api('/entitlements', token);

/**
 * True when the user's entitlement grants the paid feature (asked each time: plans change).
 * @param {string} token
 */
export async function mayUsePaidFeature(token) {
  const e = await entitlements(token);
  return e !== null && e.status !== 'expired' && e.features.includes(settings.paidFeature);
}

/**
 * @typedef {{ event: string, timestamp: string, data: Record<string, unknown> }} Envelope
 * @typedef {{ ok: true, envelope: Envelope } | { ok: false, status: 400 | 401, reason: string }} WebhookCheck
 */

/**
 * Checks a delivery as the marketplace signs it: `sha256=` + hex HMAC-SHA256 of the raw body, keyed
 * with the whole `whsec_…` secret; then that its timestamp is within `toleranceS` of now (a
 * replayed old delivery is refused). mkt's forwards of late deliveries carry a fresh timestamp.
 * @param {Buffer} raw
 * @param {string | undefined} signature
 * @returns {WebhookCheck}
 */
export function checkWebhook(raw, signature, now = Date.now(), toleranceS = 300) {
  const expected = Buffer.from(
    `sha256=${createHmac('sha256', settings.webhookSecret).update(raw).digest('hex')}`,
  );
  const given = Buffer.from(signature ?? '');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, status: 401, reason: 'bad signature' };
  /** @type {Envelope} */
  let envelope;
  try {
    envelope = JSON.parse(raw.toString('utf8'));
  } catch {
    return { ok: false, status: 400, reason: 'not JSON' };
  }
  if (typeof envelope?.event !== 'string' || typeof envelope.timestamp !== 'string')
    return { ok: false, status: 400, reason: 'not an event envelope' };
  const age = Math.abs(now - Date.parse(envelope.timestamp)) / 1000;
  if (!(age <= toleranceS)) return { ok: false, status: 401, reason: 'timestamp outside the tolerance' };
  return { ok: true, envelope };
}

/**
 * The user an embedded page is shown to, from the dashboard's signed context token.
 * @param {string} token
 * @returns {Promise<string>}
 */
export async function checkContextToken(token) {
  const { payload } = await jwtVerify(token, new TextEncoder().encode(settings.clientSecret), {
    algorithms: ['HS256'],
    issuer: settings.siteUrl,
    audience: settings.clientId,
  });
  if (typeof payload.sub !== 'string') throw new Error('the context token names no user');
  return payload.sub;
}
