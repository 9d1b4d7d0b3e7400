// Everything this app needs of the marketplace: its settings, OAuth sign-in (code flow with PKCE
// and state), the identity and entitlement API, webhook signatures and the embedded page's context
// token. The settings come from .env (written by `mkt init`, never committed).
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { jwtVerify } from 'jose';

function required(name: string): string {
  const value = process.env[name];
  if (!value)
    throw new Error(
      `${name} is not set: run the app with its .env (npm run dev), or run \`mkt init\` again.`,
    );
  return value;
}

export const settings = {
  siteUrl: required('MKT_SITE_URL').replace(/\/+$/, ''),
  clientId: required('MKT_CLIENT_ID'),
  clientSecret: required('MKT_CLIENT_SECRET'),
  webhookSecret: required('MKT_WEBHOOK_SECRET'),
  port: Number(process.env.PORT ?? 3000),
  /** The feature a paid plan grants (`mkt plans create --feature …`). */
  paidFeature: process.env.PAID_FEATURE ?? 'pro',
};
export const appUrl = `http://localhost:${settings.port}`;
export const redirectUri = `${appUrl}/callback`;
const apiUrl = `${settings.siteUrl}/api/v1`;

interface Metadata {
  authorization_endpoint: string;
  token_endpoint: string;
}
let metadata: Promise<Metadata> | undefined;
/** The marketplace's OAuth endpoints, from its RFC 8414 metadata (read once). */
function endpoints(): Promise<Metadata> {
  metadata ??= fetch(`${settings.siteUrl}/.well-known/oauth-authorization-server`).then(async (res) => {
    if (!res.ok) throw new Error(`OAuth metadata answered HTTP ${res.status}`);
    return (await res.json()) as Metadata;
  });
  return metadata;
}

const base64url = (bytes: Buffer) => bytes.toString('base64url');

/** Where to send the person to sign in, and what the callback must check. */
export async function startSignIn(): Promise<{ url: string; state: string; verifier: string }> {
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

/** Exchanges the callback's code for an access token. */
export async function finishSignIn(code: string, verifier: string): Promise<string> {
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
  const body = (await res.json().catch(() => ({}))) as { access_token?: string; error?: string };
  if (!res.ok || !body.access_token)
    throw new Error(`The token exchange failed: ${body.error ?? `HTTP ${res.status}`}`);
  return body.access_token;
}

export interface User {
  id: string;
  name: string;
  email: string;
}
export interface Entitlement {
  plan: string;
  status?: string;
  features: string[];
}

/** GET {base_url}{path} as the signed-in user; null when the marketplace answers 404. */
async function api<T>(path: string, token: string): Promise<T | null> {
  const res = await fetch(`${apiUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status === 404) return null;
  if (!res.ok) throw new Error(`GET ${path} answered HTTP ${res.status}`);
  return (await res.json()) as T;
}
export const whoami = (token: string) => api<User>('/whoami', token);
export const entitlements = (token: string) => api<Entitlement>('/entitlements', token);

/** True when the user's entitlement grants the paid feature (asked each time: plans change). */
export async function mayUsePaidFeature(token: string): Promise<boolean> {
  const e = await entitlements(token);
  return e !== null && e.status !== 'expired' && e.features.includes(settings.paidFeature);
}

export type WebhookCheck =
  | { ok: true; envelope: { event: string; timestamp: string; data: Record<string, unknown> } }
  | { ok: false; reason: string };

/**
 * Checks a delivery as the marketplace signs it: `sha256=` + hex HMAC-SHA256 of the raw body, keyed
 * with the whole `whsec_…` secret; then that its timestamp is within `toleranceS` of now (a
 * replayed old delivery is refused).
 */
export function checkWebhook(
  raw: Buffer,
  signature: string | undefined,
  now = Date.now(),
  toleranceS = 300,
): WebhookCheck {
  const expected = Buffer.from(
    `sha256=${createHmac('sha256', settings.webhookSecret).update(raw).digest('hex')}`,
  );
  const given = Buffer.from(signature ?? '');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, reason: 'bad signature' };
  const envelope = JSON.parse(raw.toString('utf8'));
  const age = Math.abs(now - Date.parse(envelope.timestamp)) / 1000;
  if (!(age <= toleranceS)) return { ok: false, reason: 'timestamp outside the tolerance' };
  return { ok: true, envelope };
}

/** The user an embedded page is shown to, from the dashboard's signed context token. */
export async function checkContextToken(token: string): Promise<string> {
  const { payload } = await jwtVerify(token, new TextEncoder().encode(settings.clientSecret), {
    algorithms: ['HS256'],
    issuer: settings.siteUrl,
    audience: settings.clientId,
  });
  if (typeof payload.sub !== 'string') throw new Error('the context token names no user');
  return payload.sub;
}
