import { createHash } from 'node:crypto';
import type { SandboxCore } from '../kernel/core.js';
import { oauthError } from '../kernel/http/problem.js';
import { secretsEqual } from '../kernel/ids.js';
import { issueTokens, revokeFamily, type TokenResponse } from '../kernel/model.js';
import type { AppRecord, Scope, TokenRecord } from '../kernel/storage/records.js';
import { PKCE_PATTERN } from './request.js';
import { need } from './token-request.js';

const invalidGrant = (message: string) => oauthError(400, 'invalid_grant', message);

/** `grant_type=authorization_code`: single use, 60 s, bound to client, redirect URI and PKCE challenge. */
export function exchangeCode(core: SandboxCore, app: AppRecord, fields: Map<string, string>): TokenResponse {
  const code = need(fields, 'code');
  const redirectUri = need(fields, 'redirect_uri');
  const record = core.codes.get(code);
  if (!record || record.client_id !== app.client_id)
    throw invalidGrant('The authorization code is not valid.');
  if (record.used) {
    // RFC 6749 section 4.1.2: a replayed code revokes what it already granted.
    revokeFamily(core, record.family);
    throw invalidGrant('The authorization code was already used.');
  }
  if (record.expires_at <= core.now()) {
    core.codes.delete(code);
    throw invalidGrant('The authorization code has expired.');
  }
  if (record.redirect_uri !== redirectUri) {
    throw invalidGrant('The redirect_uri does not match the authorization request.');
  }
  const verifier = fields.get('code_verifier');
  if (record.code_challenge !== null) {
    if (verifier === undefined) throw invalidGrant('The code_verifier is missing.');
    if (!PKCE_PATTERN.test(verifier)) throw invalidGrant('The code_verifier is malformed.');
    const computed = createHash('sha256').update(verifier, 'ascii').digest('base64url');
    if (!secretsEqual(computed, record.code_challenge)) {
      throw invalidGrant('The code_verifier does not match the code_challenge.');
    }
  } else if (verifier !== undefined) {
    throw invalidGrant('A code_verifier was sent but the authorization had no code_challenge.');
  }
  record.used = true;
  return issueTokens(core, app, record.user_id, record.scopes, record.family);
}

/**
 * How long a spent refresh token is still accepted, answering the same new pair again: a client
 * whose answer was lost (a dropped connection, a crash before it stored the pair) retries safely
 * (docs/DECISIONS.md, refresh reuse interval).
 */
export const REFRESH_REUSE_INTERVAL_MS = 60_000;

/** The pair a spent refresh token was spent for, while the reuse interval lasts and that pair is unused. */
function sameAnswerAgain(core: SandboxCore, spent: TokenRecord): TokenResponse | undefined {
  if (spent.spent_at == null || spent.successor == null) return undefined;
  if (core.now() - spent.spent_at > REFRESH_REUSE_INTERVAL_MS) return undefined;
  const pair = JSON.parse(spent.successor) as TokenResponse;
  return core.ledger.token(pair.refresh_token)?.kind === 'refresh' ? pair : undefined;
}

/**
 * `grant_type=refresh_token`: the token rotates; the used one is kept as spent (on disk). Within
 * {@link REFRESH_REUSE_INTERVAL_MS} it answers the same new pair again (idempotent); a reuse after
 * that — a sign of theft — ends the whole grant, also after a restart.
 */
export function refresh(core: SandboxCore, app: AppRecord, fields: Map<string, string>): TokenResponse {
  const token = need(fields, 'refresh_token');
  const record = core.ledger.token(token);
  if (record?.kind === 'spent' && record.app_id === app.id) {
    const again = sameAnswerAgain(core, record);
    if (again) {
      // Accepted once more only: the next reuse ends the grant.
      core.ledger.commit({ op: 'token', v: { ...record, successor: null } });
      return again;
    }
    revokeFamily(core, record.family);
    throw invalidGrant('The refresh token was already used.');
  }
  if (!record || record.kind !== 'refresh' || record.app_id !== app.id) {
    throw invalidGrant('The refresh token is not valid.');
  }
  let scopes = record.scopes;
  const requested = fields.get('scope');
  if (requested !== undefined) {
    const list = requested.split(' ').filter((s) => s !== '');
    if (list.some((s) => !(record.scopes as string[]).includes(s))) {
      throw oauthError(400, 'invalid_scope', 'A refresh cannot add scopes.');
    }
    scopes = list as Scope[];
  }
  const pair = issueTokens(core, app, record.user_id, scopes, record.family);
  const spent: TokenRecord = {
    ...record,
    kind: 'spent',
    spent_at: core.now(),
    successor: JSON.stringify(pair),
  };
  core.ledger.commit({ op: 'token', v: spent });
  return pair;
}
