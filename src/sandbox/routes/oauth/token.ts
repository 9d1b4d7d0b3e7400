import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SandboxCore } from '../../core.js';
import { SandboxOAuthError } from '../../http/errors.js';
import { sendJson } from '../../http/send.js';
import { authenticateClient } from './client-auth.js';
import { exchangeCode, refresh } from './grants.js';
import { need, readTokenRequest } from './token-request.js';

const noStore = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** `POST /api/oauth/token` and `POST /api/v1/oauth/token`: answered once the tokens are on disk. */
export async function tokenEndpoint(
  core: SandboxCore,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  try {
    const fields = await readTokenRequest(req);
    const grantType = need(fields, 'grant_type');
    if (grantType !== 'authorization_code' && grantType !== 'refresh_token') {
      throw new SandboxOAuthError(
        400,
        'unsupported_grant_type',
        `The grant type "${grantType}" is not supported.`,
      );
    }
    const app = authenticateClient(core, req, fields);
    const body =
      grantType === 'authorization_code' ? exchangeCode(core, app, fields) : refresh(core, app, fields);
    await core.ledger.sync();
    sendJson(res, 200, body, noStore);
  } catch (error) {
    if (!(error instanceof SandboxOAuthError)) throw error;
    // A revoked family is revoked on disk too before the client hears about it.
    await core.ledger.sync();
    const body = { error: error.code, error_description: error.message };
    sendJson(res, error.status, body, { ...noStore, ...error.headers });
  }
}
