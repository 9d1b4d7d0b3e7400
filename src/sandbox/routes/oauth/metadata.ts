import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SandboxCore } from '../../core.js';
import { sendJson } from '../../http/send.js';
import { SCOPES } from '../../storage/records.js';

/** `GET /.well-known/oauth-authorization-server`: RFC 8414 authorization server metadata. */
export function serverMetadata(core: SandboxCore, _req: IncomingMessage, res: ServerResponse): void {
  sendJson(res, 200, {
    issuer: core.siteUrl,
    authorization_endpoint: `${core.siteUrl}/oauth/authorize`,
    token_endpoint: `${core.siteUrl}/api/oauth/token`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
    scopes_supported: SCOPES,
  });
}
