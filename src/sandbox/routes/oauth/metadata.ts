import { Hono } from 'hono';
import type { SandboxEnv } from '../../http/env.js';
import { SCOPES } from '../../storage/records.js';
import { DEVICE_GRANT_TYPE } from './device.js';

/**
 * RFC 8414 authorization server metadata, and one member of the sandbox's own (RFC 8414 §2 allows
 * more): `sandbox_client_id`, the seeded app's client id (public, as in every authorization URL), so
 * that mkt's hint for a person not yet signed in is a line that works.
 */
export const metadataRoutes = new Hono<SandboxEnv>().get('/.well-known/oauth-authorization-server', (c) => {
  const core = c.get('core');
  const site = core.siteUrl;
  const seeded = core.ledger.app(core.ledger.seed.app_id);
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
      ...(seeded ? { sandbox_client_id: seeded.client_id } : {}),
    },
    200,
    { 'cache-control': 'no-store' },
  );
});
