import { Hono } from 'hono';
import { z } from 'zod';
import { createRoute, openapi } from '../kernel/http/declare.js';
import type { SandboxEnv } from '../kernel/http/env.js';
import { openJson, pageErrors, PUBLIC } from '../kernel/http/responses.js';
import { SCOPES } from '../kernel/storage/records.js';
import { DEVICE_GRANT_TYPE } from './device.js';

const Metadata = z
  .strictObject({
    issuer: z.string(),
    authorization_endpoint: z.string(),
    token_endpoint: z.string(),
    device_authorization_endpoint: z.string(),
    response_types_supported: z.array(z.literal('code')),
    grant_types_supported: z.array(z.enum(['authorization_code', 'refresh_token', DEVICE_GRANT_TYPE])),
    code_challenge_methods_supported: z.array(z.literal('S256')),
    token_endpoint_auth_methods_supported: z.array(z.enum(['client_secret_post', 'client_secret_basic'])),
    scopes_supported: z.array(z.enum(SCOPES)),
    sandbox_client_id: z.string().optional().meta({
      description:
        "The sandbox's own member (RFC 8414 §2 allows more): the seeded app's client id, public as in every authorization URL, so that mkt's hint for a person not yet signed in is a line that works",
    }),
  })
  .meta({ id: 'AuthorizationServerMetadata', description: 'RFC 8414 §2' });

const metadata = createRoute({
  method: 'get',
  path: '/.well-known/oauth-authorization-server',
  summary: 'RFC 8414 authorization server metadata',
  security: PUBLIC,
  responses: { 200: openJson('RFC 8414 metadata', Metadata), ...pageErrors(400) },
});

/** RFC 8414 authorization server metadata, and the sandbox's `sandbox_client_id` (the seeded app's client id). */
export const metadataRoutes = new Hono<SandboxEnv>();

openapi(metadataRoutes, metadata, (c) => {
  const core = c.get('core');
  const site = core.siteUrl;
  const seeded = core.ledger.app(core.ledger.seed.app_id);
  return c.json(
    {
      issuer: site,
      authorization_endpoint: `${site}/oauth/authorize`,
      token_endpoint: `${site}/api/oauth/token`,
      device_authorization_endpoint: `${site}/api/oauth/device_authorization`,
      response_types_supported: ['code' as const],
      grant_types_supported: ['authorization_code' as const, 'refresh_token' as const, DEVICE_GRANT_TYPE],
      code_challenge_methods_supported: ['S256' as const],
      token_endpoint_auth_methods_supported: ['client_secret_post' as const, 'client_secret_basic' as const],
      scopes_supported: [...SCOPES],
      ...(seeded ? { sandbox_client_id: seeded.client_id } : {}),
    },
    200,
    { 'cache-control': 'no-store' },
  );
});
