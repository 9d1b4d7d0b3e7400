import { Hono } from 'hono';
import type { SandboxEnv } from '../../http/env.js';
import { SCOPES } from '../../storage/records.js';
import { DEVICE_GRANT_TYPE } from './device.js';

/** RFC 8414 authorization server metadata. */
export const metadataRoutes = new Hono<SandboxEnv>().get('/.well-known/oauth-authorization-server', (c) => {
  const site = c.get('core').siteUrl;
  return c.json(
    {
      issuer: site,
      authorization_endpoint: `${site}/oauth/authorize`,
      token_endpoint: `${site}/api/oauth/token`,
      device_authorization_endpoint: `${site}/api/oauth/device_authorization`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token', DEVICE_GRANT_TYPE],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      scopes_supported: SCOPES,
    },
    200,
    { 'cache-control': 'no-store' },
  );
});
