import type { Deps } from '../deps.js';
import { storedClientSecret } from '../credentials/client-secret.js';
import { ApiError, CheckFailedError, MktError, UsageError } from '../errors.js';
import {
  CONTEXT_TOKEN_PARAM,
  HS256_SIGNATURE_BYTES,
  decodeContextToken,
  quote,
  signatureMatches,
  verifyContextToken,
  type ContextClaims,
  type ContextTokenFailure,
  type DecodedContextToken,
} from '../wire/context-token.js';
import { readInput } from '../platform/input.js';
import { getApp } from './apps.js';

type EmbeddedDeps = Pick<
  Deps,
  'api' | 'config' | 'profile' | 'credentials' | 'session' | 'env' | 'clock' | 'siteUrl' | 'stdin'
>;

/** The dashboard page that embeds an app, as `mkt apps preview` prints it. */
export interface Preview {
  url: string;
  app_id: string;
  user_id: string | null;
  embed_url: string;
}

/** The dashboard URL that shows the app embedded for `user` (or, without one, lets the person pick a user). */
export async function previewApp(
  deps: EmbeddedDeps,
  input: { app?: string; user?: string },
): Promise<Preview> {
  if (input.user !== undefined && !/^usr_[A-Za-z0-9_-]+$/.test(input.user)) {
    throw new UsageError(`--user "${input.user}" is not a test user id (usr_…).`, { code: 'invalid_user' });
  }
  const app = await getApp(deps, { app: input.app });
  if (!app.embed_url) {
    throw new MktError(
      'no_embed_url',
      `App ${app.id} has no embed URL, so the dashboard has no page to show.`,
      1,
      {
        hints: [
          `mkt apps update ${app.id} --embed-url https://…   (or http://127.0.0.1:PORT/… for a local page)`,
        ],
      },
    );
  }
  return {
    url: await dashboardLink(deps, app.id, input.user),
    app_id: app.id,
    user_id: input.user ?? null,
    embed_url: app.embed_url,
  };
}

/**
 * The dashboard's address for the app: the marketplace's preview link (a capability for the caller,
 * docs/DECISIONS.md §9), or, from a marketplace without one, the plain dashboard address.
 */
async function dashboardLink(deps: EmbeddedDeps, appId: string, user: string | undefined): Promise<string> {
  try {
    const res = await deps.api.request<{ url?: unknown }>(
      'POST',
      `/apps/${encodeURIComponent(appId)}/preview-links`,
      { json: user ? { user_id: user } : {} },
    );
    const url = res.data?.url;
    if (typeof url === 'string' && url.startsWith(`${deps.siteUrl}/`)) return url;
  } catch (err) {
    if (!(err instanceof ApiError && (err.status === 404 || err.status === 405))) throw err;
  }
  const url = new URL(`${deps.siteUrl}/dashboard/apps/${encodeURIComponent(appId)}`);
  if (user) url.searchParams.set('user_id', user);
  return url.href;
}

/** What `mkt apps verify-context-token` checks: the token (or the embed URL carrying it) and whose it should be. */
export interface VerifyContextInput {
  /** The token, or the framed page's URL with `context_token=` in its query; read from stdin when absent. */
  token?: string;
  app?: string;
  /** The expected audience, given directly: no request to the marketplace is needed. */
  clientId?: string;
  /** Seconds of clock difference forgiven on `exp` and `nbf`. */
  toleranceS?: number;
}

/** A valid token's claims, how long it still lives, and which secret verified it. */
export interface VerifiedContext {
  valid: true;
  claims: ContextClaims;
  expires_in_s: number;
  secret_source: string;
}

/** Checks a context token; throws a CheckFailedError (exit 3) naming the likely reason when it does not verify. */
export async function verifyContext(deps: EmbeddedDeps, input: VerifyContextInput): Promise<VerifiedContext> {
  const token = tokenFrom(input.token ?? (await readStdin(deps)));
  const decoded = decodeContextToken(token);
  if (!decoded.ok) throw refused(decoded, undefined);
  const expected = input.clientId
    ? { clientId: input.clientId, appId: undefined }
    : await getApp(deps, { app: input.app }).then((a) => ({ clientId: a.client_id, appId: a.id }));
  const secret = await clientSecret(deps, expected.clientId);
  const nowS = deps.clock.now() / 1000;
  const result = verifyContextToken(token, {
    secret: secret.value,
    issuer: deps.siteUrl,
    audience: expected.clientId,
    nowS,
    toleranceS: input.toleranceS,
  });
  if (!result.ok) {
    if (result.reason === 'bad_signature')
      throw await signatureMismatch(deps, decoded, expected.clientId, secret);
    throw refused(result, decoded);
  }
  if (expected.appId && result.claims.app_id !== expected.appId) {
    throw refused(
      {
        ok: false,
        reason: 'wrong_audience',
        message: `The token names app ${quote(result.claims.app_id)}, not ${expected.appId}.`,
      },
      decoded,
    );
  }
  return {
    valid: true,
    claims: result.claims,
    expires_in_s: Math.max(0, Math.floor(result.claims.exp - nowS)),
    secret_source: secret.source,
  };
}

/** The token itself: an embed URL carrying one gives its `context_token` parameter. */
function tokenFrom(text: string): string {
  const value = text.trim();
  if (!/^https?:\/\//i.test(value)) return value;
  let param: string | null = null;
  try {
    param = new URL(value).searchParams.get(CONTEXT_TOKEN_PARAM);
  } catch {
    // not a URL after all: checked as a token below
  }
  if (param === null) {
    throw new UsageError(
      `That URL has no ${CONTEXT_TOKEN_PARAM} parameter; pass the token or the framed page's URL.`,
      {
        code: 'no_token',
      },
    );
  }
  return param;
}

async function readStdin(deps: Pick<Deps, 'stdin'>): Promise<string> {
  if (deps.stdin.isTTY) {
    throw new UsageError('No token: pass it as an argument or on stdin.', {
      code: 'no_token',
      hints: ['pbpaste | mkt apps verify-context-token', 'mkt apps verify-context-token "$TOKEN"'],
    });
  }
  // A context token is a few KiB; 64 KiB leaves room for the framed page's whole URL.
  return readInput(deps, '-', { maxBytes: 64 * 1024, what: 'The token' });
}

interface Secret {
  value: string;
  source: string;
}

/** The client secret to verify with: MKT_CLIENT_SECRET, else the credential store. Never from argv. */
async function clientSecret(deps: EmbeddedDeps, clientId: string): Promise<Secret> {
  if (deps.env.MKT_CLIENT_SECRET) return { value: deps.env.MKT_CLIENT_SECRET, source: '$MKT_CLIENT_SECRET' };
  const stored = await storedClientSecret(deps.credentials, deps, clientId);
  if (stored) return { value: stored, source: 'the credential store' };
  throw new UsageError(`No client secret for client ${clientId}: set MKT_CLIENT_SECRET or store it.`, {
    code: 'secret_missing',
    hints: [
      'MKT_CLIENT_SECRET=… mkt apps verify-context-token …   (set it from your secret manager)',
      'mkt apps rotate-secret --kind client   (a new secret, kept in the credential store)',
    ],
  });
}

/** Hints for each reason a token is refused. */
const HINTS: Partial<Record<ContextTokenFailure['reason'], string[]>> = {
  not_a_jwt: [
    `pass the ${CONTEXT_TOKEN_PARAM} query parameter as the page received it, or the whole framed page's URL`,
  ],
  expired: [
    'mkt apps preview --user USER_ID   (reload the dashboard for a fresh token)',
    'verify the token when the page is requested, not later; it lives 5 minutes',
  ],
  not_yet_valid: ["check this machine's clock: the token's nbf is later than now"],
  wrong_issuer: ['mkt apps verify-context-token --site-url SITE_URL …   (the marketplace that issued it)'],
  wrong_audience: ['mkt apps verify-context-token --app APP_ID …   (the app the token was made for)'],
};

/** A CheckFailedError for a failed check, with the token's unverified claims in the JSON document. */
function refused(failure: ContextTokenFailure, decoded: DecodedContextToken | undefined): CheckFailedError {
  const sub = decoded?.payload.sub;
  const user = typeof sub === 'string' && /^usr_[A-Za-z0-9_-]{1,64}$/.test(sub) ? sub : 'USER_ID';
  return new CheckFailedError(failure.reason, failure.message, {
    hints: (HINTS[failure.reason] ?? []).map((hint) => hint.replace('USER_ID', user)),
    document: {
      valid: false,
      reason: failure.reason,
      message: failure.message,
      ...(failure.seconds === undefined ? {} : { seconds: Math.round(failure.seconds) }),
      ...(decoded ? { unverified_claims: decoded.payload } : {}),
    },
  });
}

/**
 * A signature that does not match: wrong secret, another app's token or altered. Said as far as the
 * secrets known here can prove it: another known secret that verifies it names the cause; a signature
 * of the wrong length was cut; otherwise both causes remain and the message says so.
 */
async function signatureMismatch(
  deps: EmbeddedDeps,
  decoded: DecodedContextToken,
  clientId: string,
  secret: Secret,
): Promise<CheckFailedError> {
  const fail = (reason: string, message: string, hints: string[] = []) =>
    new CheckFailedError(reason, message, {
      hints,
      document: { valid: false, reason, message, unverified_claims: decoded.payload },
    });
  if (decoded.signature.length !== HS256_SIGNATURE_BYTES) {
    return fail(
      'altered',
      `The signature is ${decoded.signature.length} bytes where HS256 makes ${HS256_SIGNATURE_BYTES}: the token was cut or changed on its way.`,
      [`pass the whole ${CONTEXT_TOKEN_PARAM} parameter (three dot-separated parts)`],
    );
  }
  const stored = (id: string) => storedClientSecret(deps.credentials, deps, id);
  if (secret.source === '$MKT_CLIENT_SECRET') {
    const own = await stored(clientId);
    if (own && own !== secret.value && signatureMatches(decoded, own)) {
      return fail(
        'wrong_secret',
        `MKT_CLIENT_SECRET is not the secret this token was signed with: the stored client secret of ${clientId} verifies it.`,
        ['unset MKT_CLIENT_SECRET, or set it to the current client secret of the app'],
      );
    }
  }
  const aud = decoded.payload.aud;
  if (typeof aud === 'string' && aud !== clientId) {
    const other = /^[\w.-]{1,200}$/.test(aud) ? await stored(aud) : null;
    const proven = other !== null && signatureMatches(decoded, other);
    return fail(
      'wrong_audience',
      proven
        ? `The token was made for client ${quote(aud)} (its stored client secret verifies it), not for ${clientId}.`
        : `The signature does not match the client secret of ${clientId}, and the token says it was made for client ${quote(aud)}: most likely another app's token.`,
      ['mkt apps verify-context-token --client-id CLIENT_ID …   (the client the token names)'],
    );
  }
  return fail(
    'wrong_secret_or_altered',
    `The signature does not match the client secret of ${clientId} (from ${secret.source}): the token was signed with another secret (the app's secret before a rotation, another app's) or changed after signing; no secret known here verifies it.`,
    [
      'MKT_CLIENT_SECRET=… mkt apps verify-context-token …   (with the current client secret of the app)',
      `pass the ${CONTEXT_TOKEN_PARAM} parameter exactly as the page received it`,
    ],
  );
}
