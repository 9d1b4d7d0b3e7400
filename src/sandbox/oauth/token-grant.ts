import { Hono } from 'hono';
import { z } from 'zod';
import { createRoute, openapi, type DeclaredContext } from '../kernel/http/declare.js';
import type { SandboxEnv } from '../kernel/http/env.js';
import { NO_STORE, noStoreError, oauthError, SandboxApiError } from '../kernel/http/problem.js';
import { CLIENT_SECURITY, oauthErrorAnswer, openJson } from '../kernel/http/responses.js';
import { Tokens } from '../kernel/shapes.js';
import { authenticateClient } from './client-auth.js';
import { DEVICE_GRANT_TYPE, exchangeDeviceCode } from './device.js';
import { exchangeCode, refresh } from './grants.js';
import { need, readTokenRequest } from './token-request.js';

/** The grant types the token endpoint answers. */
const GRANTS: Record<string, typeof exchangeCode | undefined> = {
  authorization_code: exchangeCode,
  refresh_token: refresh,
  [DEVICE_GRANT_TYPE]: exchangeDeviceCode,
};

const text = (description: string) => z.string().min(1).meta({ description });
const client = {
  client_id: text('The client id (with HTTP Basic, the same id as in the credentials)'),
  client_secret: text('The client secret, unless sent with HTTP Basic').optional(),
};
/**
 * RFC 6749 §4.1.3, §6 and RFC 8628 §3.4, one shape per grant type: one string each; parameters the
 * endpoint does not know are ignored. The endpoint reads it itself (`readTokenRequest`).
 */
const TokenRequest = z
  .discriminatedUnion('grant_type', [
    z.looseObject({
      grant_type: z.literal('authorization_code'),
      code: text('The authorization code'),
      redirect_uri: text('The redirect URI of the authorization request'),
      code_verifier: text('The PKCE verifier, when the request had a challenge').optional(),
      ...client,
    }),
    z.looseObject({
      grant_type: z.literal('refresh_token'),
      refresh_token: text('The refresh token (it rotates)'),
      scope: text('A narrower scope').optional(),
      ...client,
    }),
    z.looseObject({
      grant_type: z.literal(DEVICE_GRANT_TYPE),
      device_code: text('The device code'),
      ...client,
    }),
  ])
  .meta({ id: 'TokenRequest' });

/** The token endpoint at one of its two paths. */
const tokenRoute = <P extends string>(path: P) =>
  createRoute({
    method: 'post',
    path,
    summary: 'Tokens for a code, a refresh token or a device code (RFC 6749 §4.1.3, §6; RFC 8628 §3.4)',
    security: CLIENT_SECURITY,
    request: {
      body: {
        required: true,
        content: {
          'application/json': { schema: TokenRequest },
          'application/x-www-form-urlencoded': { schema: TokenRequest },
        },
      },
    },
    responses: {
      200: openJson('Tokens (RFC 6749 §5.1)', Tokens, true),
      400: oauthErrorAnswer(400, 'Refused (RFC 6749 §5.2; RFC 8628 §3.5 while the device flow is pending)'),
      401: oauthErrorAnswer(401, 'Client authentication failed (`WWW-Authenticate: Basic` after HTTP Basic)'),
      413: oauthErrorAnswer(413, 'The body is larger than 1 MiB'),
      415: oauthErrorAnswer(415, 'The body is neither JSON nor form-encoded'),
    },
  });

const ROUTES = [tokenRoute('/api/oauth/token'), tokenRoute('/api/v1/oauth/token')] as const;

/** The token endpoint: answered once the tokens are on disk; its failures in RFC 6749 §5.2 form. */
async function tokenEndpoint(c: DeclaredContext<(typeof ROUTES)[number]>) {
  const core = c.get('core');
  try {
    const fields = await readTokenRequest(c.env.incoming);
    const grantType = need(fields, 'grant_type');
    const grant = GRANTS[grantType];
    if (!grant) {
      throw oauthError(400, 'unsupported_grant_type', `The grant type "${grantType}" is not supported.`);
    }
    const app = authenticateClient(core, c.env.incoming, fields);
    const body = grant(core, app, fields);
    await core.ledger.sync();
    return c.json(body, 200, NO_STORE);
  } catch (error) {
    // A revoked family is revoked on disk too before the client hears about it.
    if (error instanceof SandboxApiError && error.form === 'oauth') await core.ledger.sync();
    throw noStoreError(error);
  }
}

/** `POST /api/oauth/token` and `POST /api/v1/oauth/token`. */
export const tokenRoutes = new Hono<SandboxEnv>();
// The endpoint reads its JSON or form body itself: its refusals are RFC 6749's, not the API's.
for (const route of ROUTES) openapi(tokenRoutes, route, tokenEndpoint, { ownRequest: true });
