import { Hono } from 'hono';
import type { Context } from 'hono';
import type { SandboxEnv } from '../../http/env.js';
import { NO_STORE, noStoreError, oauthError, SandboxApiError } from '../../http/problem.js';
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

/** The token endpoint: answered once the tokens are on disk; its failures in RFC 6749 §5.2 form. */
async function tokenEndpoint(c: Context<SandboxEnv>): Promise<Response> {
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
export const tokenRoutes = new Hono<SandboxEnv>()
  .post('/api/oauth/token', tokenEndpoint)
  .post('/api/v1/oauth/token', tokenEndpoint);
