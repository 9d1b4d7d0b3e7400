import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SandboxCore } from './core.js';
import { ApiError, decodeUtf8, mediaType, OAuthError, readRawBody, sendHtml, sendJson } from './http.js';
import { randomId, secretsEqual } from './ids.js';
import { issueTokens, revokeFamily, userOfApp } from './model.js';
import { consentPage, errorPage } from './pages.js';
import { SCOPES, type AppRecord, type Scope, type UserRecord } from './store.js';
import { isLoopbackUrl } from './validate.js';

/** Authorization codes expire 60 s after they are issued (docs/DECISIONS.md §2). */
export const CODE_TTL_MS = 60_000;
const CONSENT_USER_LIMIT = 200;
const PKCE_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/;

class PageError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface AuthorizationRequest {
  app: AppRecord;
  redirectUri: string;
  scopes: Scope[];
  state: string | null;
  codeChallenge: string | null;
}

/** RFC 8252 section 7.3: a registered loopback URI matches the same URI on any port. */
export function redirectUriMatches(registered: string, requested: string): boolean {
  if (registered === requested) return true;
  let a: URL;
  let b: URL;
  try {
    a = new URL(registered);
    b = new URL(requested);
  } catch {
    return false;
  }
  if (!isLoopbackUrl(a) || !isLoopbackUrl(b) || a.hostname === 'localhost') return false;
  return a.hostname === b.hostname && a.pathname === b.pathname && a.search === b.search && b.hash === '';
}

function single(params: URLSearchParams, name: string): string | null {
  const all = params.getAll(name);
  if (all.length > 1) throw new PageError('invalid_request', `The parameter "${name}" is repeated.`);
  const value = all[0];
  return value === undefined || value === '' ? null : value;
}

/** Validates an authorization request; every problem is shown on the page, never redirected. */
function parseAuthorizationRequest(
  core: SandboxCore,
  params: URLSearchParams,
  options: { responseTypeRequired: boolean },
): AuthorizationRequest {
  const clientId = single(params, 'client_id');
  if (clientId === null) throw new PageError('invalid_request', 'The parameter "client_id" is missing.');
  const app = core.store.appsByClientId.get(clientId);
  if (!app) throw new PageError('invalid_client', `No application has the client id "${clientId}".`);
  const redirectUri = single(params, 'redirect_uri');
  if (redirectUri === null)
    throw new PageError('invalid_request', 'The parameter "redirect_uri" is missing.');
  if (!app.redirect_uris.some((r) => redirectUriMatches(r, redirectUri))) {
    throw new PageError(
      'invalid_redirect_uri',
      `The redirect URI "${redirectUri}" is not registered for ${app.name}.`,
    );
  }
  const responseType = single(params, 'response_type');
  if (responseType === null && options.responseTypeRequired)
    throw new PageError('invalid_request', 'The parameter "response_type" is missing.');
  if (responseType !== null && responseType !== 'code') {
    throw new PageError(
      'unsupported_response_type',
      `The response type "${responseType}" is not supported; use "code".`,
    );
  }
  const scopeParam = single(params, 'scope') ?? 'identity:read';
  const scopes = [...new Set(scopeParam.split(' ').filter((s) => s !== ''))];
  for (const s of scopes) {
    if (!(SCOPES as readonly string[]).includes(s)) {
      throw new PageError('invalid_scope', `Unknown scope "${s}". Known scopes: ${SCOPES.join(', ')}.`);
    }
  }
  if (scopes.length === 0) throw new PageError('invalid_scope', 'The parameter "scope" is empty.');
  const state = single(params, 'state');
  if (state !== null && state.length > 512)
    throw new PageError('invalid_request', 'The "state" is too long.');
  const codeChallenge = single(params, 'code_challenge');
  const method = single(params, 'code_challenge_method');
  if (codeChallenge === null && method !== null) {
    throw new PageError('invalid_request', 'A "code_challenge_method" was sent without a "code_challenge".');
  }
  if (codeChallenge !== null) {
    if (method !== 'S256') {
      throw new PageError('invalid_request', 'Only the PKCE code_challenge_method "S256" is supported.');
    }
    if (!PKCE_PATTERN.test(codeChallenge)) {
      throw new PageError('invalid_request', 'The "code_challenge" is not a valid S256 challenge.');
    }
  }
  return { app, redirectUri, scopes: scopes as Scope[], state, codeChallenge };
}

function consentUsers(core: SandboxCore, app: AppRecord): UserRecord[] {
  const users: UserRecord[] = [];
  for (const id of core.store.userIdsByApp.get(app.id) ?? []) {
    const user = core.store.users.get(id);
    if (user) users.push(user);
    if (users.length >= CONSENT_USER_LIMIT) break;
  }
  const developer = core.store.users.get(app.owner_id);
  if (developer) users.push(developer);
  return users;
}

/** `GET /oauth/authorize`: the consent page, or the request error with a 400. */
export function showAuthorize(core: SandboxCore, url: URL, res: ServerResponse): void {
  let request: AuthorizationRequest;
  try {
    request = parseAuthorizationRequest(core, url.searchParams, { responseTypeRequired: true });
  } catch (error) {
    if (error instanceof PageError)
      return sendHtml(res, 400, errorPage('Authorization failed', error.code, error.message));
    throw error;
  }
  const hidden: Record<string, string> = {
    client_id: request.app.client_id,
    redirect_uri: request.redirectUri,
    response_type: 'code',
    scope: request.scopes.join(' '),
  };
  if (request.state !== null) hidden.state = request.state;
  if (request.codeChallenge !== null) {
    hidden.code_challenge = request.codeChallenge;
    hidden.code_challenge_method = 'S256';
  }
  sendHtml(
    res,
    200,
    consentPage({ app: request.app, scopes: request.scopes, users: consentUsers(core, request.app), hidden }),
  );
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const raw = await readRawBody(req);
  if (mediaType(req) !== 'application/x-www-form-urlencoded') {
    throw new PageError('invalid_request', 'Send the form as application/x-www-form-urlencoded.');
  }
  const text = decodeUtf8(raw);
  if (text === undefined) throw new PageError('invalid_request', 'The form is not valid UTF-8.');
  return new URLSearchParams(text);
}

/** `POST /oauth/authorize`: approve (302 with `code` and `state`) or deny (302 with `error=access_denied`). */
export async function submitAuthorize(
  core: SandboxCore,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  try {
    const form = await readForm(req);
    // The consent form's hidden fields (docs/PROTOCOL.md) need not repeat response_type.
    const request = parseAuthorizationRequest(core, form, { responseTypeRequired: false });
    const decision = single(form, 'decision');
    if (decision !== 'approve' && decision !== 'deny') {
      throw new PageError('invalid_request', 'The "decision" must be "approve" or "deny".');
    }
    const target = new URL(request.redirectUri);
    if (decision === 'deny') {
      target.searchParams.set('error', 'access_denied');
      target.searchParams.set('error_description', 'The user denied the request.');
    } else {
      const userId = single(form, 'user_id');
      if (userId === null) throw new PageError('invalid_request', 'Choose a user to sign in as.');
      let user: UserRecord;
      try {
        user = userOfApp(core, request.app, userId);
      } catch {
        throw new PageError('invalid_request', `The user "${userId}" cannot sign in to ${request.app.name}.`);
      }
      const code = randomId('code', 20);
      core.codes.set(code, {
        code,
        app_id: request.app.id,
        client_id: request.app.client_id,
        redirect_uri: request.redirectUri,
        user_id: user.id,
        scopes: request.scopes,
        code_challenge: request.codeChallenge,
        expires_at: core.now() + CODE_TTL_MS,
        used: false,
        family: randomId('fam', 8),
      });
      core.deliveries.emitInBackground(request.app, 'user.authorized', {
        user_id: user.id,
        app_id: request.app.id,
        scopes: request.scopes,
      });
      target.searchParams.set('code', code);
    }
    if (request.state !== null) target.searchParams.set('state', request.state);
    res.writeHead(302, { location: target.toString(), 'cache-control': 'no-store' });
    res.end();
  } catch (error) {
    if (error instanceof PageError)
      return sendHtml(res, 400, errorPage('Authorization failed', error.code, error.message));
    if (error instanceof ApiError)
      return sendHtml(res, error.status, errorPage('Authorization failed', error.code, error.message));
    throw error;
  }
}

/** Removes codes past their expiry (called periodically; codes live 60 s). */
export function sweepCodes(core: SandboxCore): void {
  const now = core.now();
  for (const [code, record] of core.codes) if (record.expires_at <= now) core.codes.delete(code);
}

const TOKEN_FIELDS = new Set([
  'grant_type',
  'code',
  'redirect_uri',
  'client_id',
  'client_secret',
  'code_verifier',
  'refresh_token',
  'scope',
]);

/** Reads the token request from a JSON or form body; every field must be a single string. */
async function readTokenRequest(req: IncomingMessage): Promise<Map<string, string>> {
  let raw: Buffer;
  try {
    raw = await readRawBody(req);
  } catch (error) {
    if (error instanceof ApiError) throw new OAuthError(error.status, 'invalid_request', error.message);
    throw error;
  }
  const type = mediaType(req);
  const text = decodeUtf8(raw);
  if (text === undefined) throw new OAuthError(400, 'invalid_request', 'The body is not valid UTF-8.');
  const fields = new Map<string, string>();
  if (type === 'application/x-www-form-urlencoded') {
    const params = new URLSearchParams(text);
    for (const key of new Set(params.keys())) {
      const values = params.getAll(key);
      if (values.length > 1)
        throw new OAuthError(400, 'invalid_request', `The parameter "${key}" is repeated.`);
      fields.set(key, values[0]!);
    }
  } else if (type === 'application/json') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new OAuthError(400, 'invalid_request', 'The body is not valid JSON.');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new OAuthError(400, 'invalid_request', 'The body must be a JSON object.');
    }
    for (const [key, value] of Object.entries(parsed)) {
      if (typeof value !== 'string')
        throw new OAuthError(400, 'invalid_request', `The field "${key}" must be a string.`);
      fields.set(key, value);
    }
  } else {
    throw new OAuthError(
      415,
      'invalid_request',
      'Send the body as application/json or application/x-www-form-urlencoded.',
    );
  }
  for (const key of fields.keys()) {
    if (!TOKEN_FIELDS.has(key)) throw new OAuthError(400, 'invalid_request', `Unknown parameter "${key}".`);
  }
  return fields;
}

/** RFC 6749 section 2.3: client_secret in the body, or HTTP Basic (form-encoded id and secret). */
function authenticateClient(core: SandboxCore, req: IncomingMessage, fields: Map<string, string>): AppRecord {
  const header = req.headers.authorization;
  let clientId = fields.get('client_id');
  let secret = fields.get('client_secret');
  let basic = false;
  if (header !== undefined) {
    const match = /^Basic +([A-Za-z0-9+/=]+)$/i.exec(header);
    if (!match)
      throw new OAuthError(401, 'invalid_client', 'Unsupported Authorization header.', basicChallenge);
    const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0)
      throw new OAuthError(401, 'invalid_client', 'Malformed Basic credentials.', basicChallenge);
    if (secret !== undefined) {
      throw new OAuthError(400, 'invalid_request', 'Use one client authentication method, not both.');
    }
    const headerId = safeDecode(decoded.slice(0, colon));
    if (clientId !== undefined && clientId !== headerId) {
      throw new OAuthError(
        400,
        'invalid_request',
        'The client_id in the body differs from the Basic credentials.',
      );
    }
    clientId = headerId;
    secret = safeDecode(decoded.slice(colon + 1));
    basic = true;
  }
  if (clientId === undefined)
    throw new OAuthError(400, 'invalid_request', 'The parameter "client_id" is missing.');
  if (secret === undefined) throw new OAuthError(401, 'invalid_client', 'The client_secret is missing.');
  const app = core.store.appsByClientId.get(clientId);
  if (!app || !secretsEqual(app.client_secret, secret)) {
    throw new OAuthError(401, 'invalid_client', 'Client authentication failed.', basic ? basicChallenge : {});
  }
  return app;
}

const basicChallenge = { 'www-authenticate': 'Basic realm="mkt-sandbox"' };

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    throw new OAuthError(401, 'invalid_client', 'Malformed Basic credentials.', basicChallenge);
  }
}

function need(fields: Map<string, string>, name: string): string {
  const value = fields.get(name);
  if (value === undefined || value === '') {
    throw new OAuthError(400, 'invalid_request', `The parameter "${name}" is missing.`);
  }
  return value;
}

function exchangeCode(core: SandboxCore, app: AppRecord, fields: Map<string, string>) {
  const code = need(fields, 'code');
  const redirectUri = need(fields, 'redirect_uri');
  const record = core.codes.get(code);
  if (!record || record.client_id !== app.client_id) {
    throw new OAuthError(400, 'invalid_grant', 'The authorization code is not valid.');
  }
  if (record.used) {
    // RFC 6749 section 4.1.2: a replayed code revokes what it already granted.
    revokeFamily(core, record.family);
    throw new OAuthError(400, 'invalid_grant', 'The authorization code was already used.');
  }
  if (record.expires_at <= core.now()) {
    core.codes.delete(code);
    throw new OAuthError(400, 'invalid_grant', 'The authorization code has expired.');
  }
  if (record.redirect_uri !== redirectUri) {
    throw new OAuthError(400, 'invalid_grant', 'The redirect_uri does not match the authorization request.');
  }
  const verifier = fields.get('code_verifier');
  if (record.code_challenge !== null) {
    if (verifier === undefined) throw new OAuthError(400, 'invalid_grant', 'The code_verifier is missing.');
    if (!PKCE_PATTERN.test(verifier))
      throw new OAuthError(400, 'invalid_grant', 'The code_verifier is malformed.');
    const computed = createHash('sha256').update(verifier, 'ascii').digest('base64url');
    if (!secretsEqual(computed, record.code_challenge)) {
      throw new OAuthError(400, 'invalid_grant', 'The code_verifier does not match the code_challenge.');
    }
  } else if (verifier !== undefined) {
    throw new OAuthError(
      400,
      'invalid_grant',
      'A code_verifier was sent but the authorization had no code_challenge.',
    );
  }
  record.used = true;
  return issueTokens(core, app, record.user_id, record.scopes, record.family);
}

function refresh(core: SandboxCore, app: AppRecord, fields: Map<string, string>) {
  const token = need(fields, 'refresh_token');
  const spentFamily = core.spentRefreshTokens.get(token);
  if (spentFamily !== undefined) {
    // Reuse of a rotated refresh token: treat the grant as stolen and end it.
    revokeFamily(core, spentFamily);
    throw new OAuthError(400, 'invalid_grant', 'The refresh token was already used.');
  }
  const record = core.store.tokens.get(token);
  if (!record || record.kind !== 'refresh' || record.app_id !== app.id) {
    throw new OAuthError(400, 'invalid_grant', 'The refresh token is not valid.');
  }
  let scopes = record.scopes;
  const requested = fields.get('scope');
  if (requested !== undefined) {
    const list = requested.split(' ').filter((s) => s !== '');
    if (list.some((s) => !(record.scopes as string[]).includes(s))) {
      throw new OAuthError(400, 'invalid_scope', 'A refresh cannot add scopes.');
    }
    scopes = list as Scope[];
  }
  core.store.deleteToken(token);
  core.spentRefreshTokens.set(token, record.family);
  return issueTokens(core, app, record.user_id, scopes, record.family);
}

/** `POST /api/oauth/token` and `POST /api/v1/oauth/token`. */
export async function tokenEndpoint(
  core: SandboxCore,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const noStore = { 'cache-control': 'no-store', pragma: 'no-cache' };
  try {
    const fields = await readTokenRequest(req);
    const grantType = need(fields, 'grant_type');
    if (grantType !== 'authorization_code' && grantType !== 'refresh_token') {
      throw new OAuthError(400, 'unsupported_grant_type', `The grant type "${grantType}" is not supported.`);
    }
    const app = authenticateClient(core, req, fields);
    const body =
      grantType === 'authorization_code' ? exchangeCode(core, app, fields) : refresh(core, app, fields);
    sendJson(res, 200, body, noStore);
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    sendJson(
      res,
      error.status,
      { error: error.code, error_description: error.message },
      { ...noStore, ...error.headers },
    );
  }
}
