import type { AuthorizationRequest, SandboxCore } from '../kernel/core.js';
import { isLoopbackUrl } from '../kernel/http/schemas.js';
import { pageError } from '../kernel/http/problem.js';
import { SCOPES, type Scope } from '../kernel/storage/records.js';

/** A PKCE code challenge or verifier (RFC 7636 section 4.1). */
export const PKCE_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/;

export type { AuthorizationRequest } from '../kernel/core.js';

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

/** One parameter at most once; '' counts as absent. */
export function single(params: URLSearchParams, name: string): string | null {
  const all = params.getAll(name);
  if (all.length > 1) throw pageError('invalid_request', `The parameter "${name}" is repeated.`);
  const value = all[0];
  return value === undefined || value === '' ? null : value;
}

/** Validates the query of `GET /oauth/authorize`; every problem is a page error. */
export function parseAuthorizationRequest(
  core: SandboxCore,
  params: URLSearchParams,
): Omit<AuthorizationRequest, 'id' | 'csrf' | 'expiresAt'> {
  const clientId = single(params, 'client_id');
  if (clientId === null) throw pageError('invalid_request', 'The parameter "client_id" is missing.');
  const app = core.ledger.appByClientId(clientId);
  if (!app) throw pageError('invalid_client', `No application has the client id "${clientId}".`);
  const redirectUri = single(params, 'redirect_uri');
  if (redirectUri === null) throw pageError('invalid_request', 'The parameter "redirect_uri" is missing.');
  if (!app.redirect_uris.some((r) => redirectUriMatches(r, redirectUri))) {
    throw pageError(
      'invalid_redirect_uri',
      `The redirect URI "${redirectUri}" is not registered for ${app.name}.`,
    );
  }
  const responseType = single(params, 'response_type');
  if (responseType === null) throw pageError('invalid_request', 'The parameter "response_type" is missing.');
  if (responseType !== 'code') {
    throw pageError(
      'unsupported_response_type',
      `The response type "${responseType}" is not supported; use "code".`,
    );
  }
  const scopeParam = single(params, 'scope') ?? 'identity:read';
  const scopes = [...new Set(scopeParam.split(' ').filter((s) => s !== ''))];
  for (const s of scopes) {
    if (!(SCOPES as readonly string[]).includes(s)) {
      throw pageError('invalid_scope', `Unknown scope "${s}". Known scopes: ${SCOPES.join(', ')}.`);
    }
  }
  if (scopes.length === 0) throw pageError('invalid_scope', 'The parameter "scope" is empty.');
  const state = single(params, 'state');
  if (state !== null && state.length > 512) throw pageError('invalid_request', 'The "state" is too long.');
  const codeChallenge = single(params, 'code_challenge');
  const method = single(params, 'code_challenge_method');
  if (codeChallenge === null && method !== null) {
    throw pageError('invalid_request', 'A "code_challenge_method" was sent without a "code_challenge".');
  }
  if (codeChallenge !== null) {
    if (method !== 'S256') {
      throw pageError('invalid_request', 'Only the PKCE code_challenge_method "S256" is supported.');
    }
    if (!PKCE_PATTERN.test(codeChallenge)) {
      throw pageError('invalid_request', 'The "code_challenge" is not a valid S256 challenge.');
    }
  }
  return { app, redirectUri, scopes: scopes as Scope[], state, codeChallenge };
}
