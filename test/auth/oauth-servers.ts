import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startServer } from '../support/server.js';

// Authorization servers nobody here wrote, run in-process on 127.0.0.1:0, each with a tiny protected
// /api/v1/whoami and /api/v1/entitlements beside it that check the token the server issued.

/** A running authorization server and what it saw. */
export interface OAuthServer {
  siteUrl: string;
  clientId: string;
  clientSecret: string;
  /** Token requests by grant type that the server answered with tokens. */
  granted: { authorization_code: number; refresh_token: number };
  /** Every request to the token endpoint: content type, whether it carried HTTP Basic, the answer. */
  tokenRequests: Array<{ type: string; basic: boolean; status: number }>;
  close(): Promise<void>;
}

export const USER_ID = 'usr_std1';
export const ENTITLEMENT = { user_id: USER_ID, app_id: 'app_std', plan: 'pro', features: ['export'] };

const LOOPBACK = /^http:\/\/127\.0\.0\.1:\d+\/callback$/;

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** Answers the protected API for `who` (a user id, or undefined when the token is not valid). */
function protectedApi(res: ServerResponse, path: string, who: string | undefined): void {
  if (!who) return sendJson(res, 401, { error: { code: 'unauthorized', message: 'token not valid' } });
  if (path === '/api/v1/whoami')
    return sendJson(res, 200, { id: who, email: 'std@example.com', name: 'Stan' });
  return sendJson(res, 200, ENTITLEMENT);
}

interface OAuthError {
  code?: number;
  name: string;
  message: string;
}

/** What the library's framework adapters answer for an error: its status, `error` and `error_description`. */
function answerError(response: { status?: number; body?: unknown }, err: OAuthError): void {
  response.status = err.code ?? 500;
  response.body = { error: err.name, error_description: err.message };
}

/** RFC 6749 §2.3.1: the id and secret inside HTTP Basic are form-urlencoded. */
const formDecode = (v: string) => decodeURIComponent(v.replace(/\+/g, ' '));

/**
 * `@node-oauth/oauth2-server` with an in-memory model. `metadata` publishes RFC 8414 metadata with the
 * endpoints at /authorize and /token (paths nothing would guess); without it they sit at the
 * interface's paths. `basicOnly` refuses client credentials in the body (401, WWW-Authenticate: Basic).
 */
export async function startOAuth2Server(
  options: { metadata?: boolean; basicOnly?: boolean; accessTokenLifetime?: number } = {},
): Promise<OAuthServer> {
  const { default: OAuth2Server } = await import('@node-oauth/oauth2-server');
  const { Request, Response } = OAuth2Server;
  const clientId = 'cid_std';
  // Characters that HTTP Basic carries only form-urlencoded (a ":" would split id and secret).
  const clientSecret = options.basicOnly ? 'cs_p+q%r:s/t' : 'cs_std_secret';
  const codes = new Map<string, Record<string, unknown>>();
  const tokens = new Map<string, Record<string, unknown>>();
  const refreshTokens = new Map<string, Record<string, unknown>>();
  const client = {
    id: clientId,
    grants: ['authorization_code', 'refresh_token'],
    redirectUris: ['http://127.0.0.1/callback'], // any port: validateRedirectUri
    accessTokenLifetime: options.accessTokenLifetime ?? 3600,
    refreshTokenLifetime: 86_400,
  };
  const model = {
    async getClient(id: string, secret: string | null) {
      const [i, s] = options.basicOnly
        ? [formDecode(id), secret === null ? null : formDecode(secret)]
        : [id, secret];
      return i === clientId && (s === null || s === clientSecret) ? client : null;
    },
    validateRedirectUri: async (uri: string) => LOOPBACK.test(uri),
    validateScope: async (_user: unknown, _client: unknown, scope: string[] | undefined) =>
      scope ?? ['identity:read'],
    async saveAuthorizationCode(code: Record<string, unknown>, c: unknown, user: unknown) {
      const saved = { ...code, client: c, user };
      codes.set(code.authorizationCode as string, saved);
      return saved;
    },
    getAuthorizationCode: async (code: string) => codes.get(code),
    revokeAuthorizationCode: async (code: { authorizationCode: string }) =>
      codes.delete(code.authorizationCode),
    async saveToken(token: Record<string, unknown>, c: unknown, user: unknown) {
      const saved = { ...token, client: c, user };
      tokens.set(token.accessToken as string, saved);
      if (token.refreshToken) refreshTokens.set(token.refreshToken as string, saved);
      return saved;
    },
    getAccessToken: async (token: string) => tokens.get(token),
    getRefreshToken: async (token: string) => refreshTokens.get(token),
    revokeToken: async (token: { refreshToken: string }) => refreshTokens.delete(token.refreshToken),
    verifyScope: async () => true,
  };
  const oauth = new OAuth2Server({
    model: model as unknown as ConstructorParameters<typeof OAuth2Server>[0]['model'],
    accessTokenLifetime: client.accessTokenLifetime,
  });
  const state: Omit<OAuthServer, 'siteUrl' | 'close'> = {
    clientId,
    clientSecret,
    granted: { authorization_code: 0, refresh_token: 0 },
    tokenRequests: [],
  };
  const paths = options.metadata
    ? { authorize: '/authorize', token: '/token' }
    : { authorize: '/oauth/authorize', token: '/api/oauth/token' };
  const send = (res: ServerResponse, response: InstanceType<typeof Response>) => {
    res.writeHead(response.status ?? 200, response.headers as Record<string, string>);
    res.end(response.body === undefined ? '' : JSON.stringify(response.body));
  };
  const server = await startServer(async (req, res, seen) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const text = seen.body;
    const type = String(req.headers['content-type'] ?? '');
    const body =
      type.includes('json') && text ? JSON.parse(text) : Object.fromEntries(new URLSearchParams(text));
    const request = new Request({
      method: req.method ?? 'GET',
      query: Object.fromEntries(url.searchParams),
      headers: req.headers as Record<string, string>,
      body,
    });
    const response = new Response({ headers: {} });
    try {
      if (options.metadata && url.pathname === '/.well-known/oauth-authorization-server') {
        return sendJson(res, 200, {
          issuer: siteUrl,
          authorization_endpoint: `${siteUrl}${paths.authorize}`,
          token_endpoint: `${siteUrl}${paths.token}`,
          token_endpoint_auth_methods_supported: options.basicOnly
            ? ['client_secret_basic']
            : ['client_secret_post', 'client_secret_basic'],
          code_challenge_methods_supported: ['S256'],
        });
      }
      if (url.pathname === paths.authorize) {
        await oauth
          .authorize(request, response, { authenticateHandler: { handle: () => ({ id: USER_ID }) } })
          .catch((err: OAuthError) => response.get('location') || answerError(response, err));
        return send(res, response);
      }
      if (url.pathname === paths.token && req.method === 'POST') {
        const basic = /^Basic /i.test(String(req.headers.authorization ?? ''));
        const record = (status: number) => state.tokenRequests.push({ type, basic, status });
        if (options.basicOnly && !basic && type.includes('x-www-form-urlencoded')) {
          record(401);
          return sendJson(
            res,
            401,
            { error: 'invalid_client', error_description: 'client authentication by HTTP Basic is required' },
            { 'www-authenticate': 'Basic realm="std"' },
          );
        }
        await oauth.token(request, response).then(
          () => (state.granted[body.grant_type as 'refresh_token']! += 1),
          (err: OAuthError) => answerError(response, err),
        );
        record(response.status ?? 200);
        return send(res, response);
      }
      if (url.pathname === '/api/v1/whoami' || url.pathname === '/api/v1/entitlements') {
        const token = await oauth.authenticate(request, response).catch(() => undefined);
        return protectedApi(res, url.pathname, (token?.user as { id?: string } | undefined)?.id);
      }
      sendJson(res, 404, { error: { code: 'not_found', message: 'nothing here' } });
    } catch (err) {
      sendJson(res, 500, { error: { code: 'test_server', message: (err as Error).message } });
    }
  });
  const siteUrl = server.url;
  return { ...state, siteUrl, close: server.close };
}

/**
 * `oidc-provider` (a certified OpenID provider) with its authorization and token endpoints at the
 * interface's paths, a native client (loopback redirect on any port), opaque access tokens for the
 * marketplace API, and an interaction route that signs the person in and consents at once.
 */
export async function startOidcProvider(
  options: {
    accessTokenTTL?: number;
    /** Enables the provider's device flow (RFC 8628) for the client, its codes living this many seconds. */
    deviceCodeTTL?: number;
    /** The deployment answers the device's first pending poll with `slow_down` (the provider leaves pacing to it). */
    slowDownOnce?: boolean;
  } = {},
): Promise<OAuthServer> {
  const { default: Provider } = await import('oidc-provider');
  const clientId = 'cid_oidc';
  const clientSecret = 'cs_oidc_secret_value_long_enough';
  const resource = 'urn:mkt:api';
  const scopes = 'identity:read entitlements:read apps:write';
  const ttl = options.accessTokenTTL ?? 3600;
  // Not startServer: oidc-provider reads each request's body itself, and needs its address first.
  const server = createServer();
  const siteUrl = await listen(server);
  const provider = new Provider(siteUrl, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: ['http://127.0.0.1/callback'],
        application_type: 'native',
        grant_types: [
          'authorization_code',
          'refresh_token',
          ...(options.deviceCodeTTL ? ['urn:ietf:params:oauth:grant-type:device_code'] : []),
        ],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    routes: { authorization: '/oauth/authorize', token: '/api/oauth/token' },
    scopes: ['openid', 'offline_access', ...scopes.split(' ')],
    features: {
      devInteractions: { enabled: false },
      deviceFlow: { enabled: Boolean(options.deviceCodeTTL) },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: scopes, accessTokenFormat: 'opaque', accessTokenTTL: ttl }),
      },
    },
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(t: string): boolean }) =>
      client.grantTypeAllowed('refresh_token'),
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: async (_ctx: unknown, id: string) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    cookies: { keys: ['test-only-cookie-key'] },
    ttl: {
      AccessToken: ttl,
      AuthorizationCode: 60,
      DeviceCode: options.deviceCodeTTL ?? 600,
      Grant: 3600,
      Interaction: 600,
      RefreshToken: 86_400,
      Session: 3600,
    },
  });
  const state: Omit<OAuthServer, 'siteUrl' | 'close'> = {
    clientId,
    clientSecret,
    granted: { authorization_code: 0, refresh_token: 0 },
    tokenRequests: [],
  };
  provider.on('grant.success', (ctx: { oidc: { params?: Record<string, unknown> } }) => {
    const grant = (ctx.oidc.params?.grant_type ?? '') as 'refresh_token';
    if (grant in state.granted) state.granted[grant] += 1;
  });
  let slowed = !options.slowDownOnce;
  provider.use(async (ctx: { body?: Record<string, unknown>; path: string }, next: () => Promise<void>) => {
    await next();
    if (!slowed && ctx.path === '/api/oauth/token' && ctx.body?.error === 'authorization_pending') {
      slowed = true;
      ctx.body = { error: 'slow_down', error_description: 'poll less often' };
    }
  });
  const callback = provider.callback();
  server.on('request', async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', siteUrl);
    try {
      if (url.pathname.startsWith('/interaction/')) {
        const details = await provider.interactionDetails(req, res);
        const grant = new provider.Grant({ accountId: USER_ID, clientId: String(details.params.client_id) });
        // The scopes are both the provider's (consent) and the API's (the access token's audience).
        grant.addOIDCScope(String(details.params.scope ?? ''));
        grant.addResourceScope(resource, String(details.params.scope ?? ''));
        const grantId = await grant.save();
        return await provider.interactionFinished(
          req,
          res,
          { login: { accountId: USER_ID }, consent: { grantId } },
          { mergeWithLastSubmission: false },
        );
      }
      if (url.pathname === '/api/v1/whoami' || url.pathname === '/api/v1/entitlements') {
        const value = String(req.headers.authorization ?? '').replace(/^Bearer /i, '');
        const token = value ? await provider.AccessToken.find(value) : undefined;
        return protectedApi(res, url.pathname, token?.accountId);
      }
      if (url.pathname === '/api/oauth/token') {
        const type = String(req.headers['content-type'] ?? '');
        const basic = /^Basic /i.test(String(req.headers.authorization ?? ''));
        res.once('finish', () => state.tokenRequests.push({ type, basic, status: res.statusCode }));
      }
      callback(req, res);
    } catch (err) {
      sendJson(res, 500, { error: { code: 'test_server', message: (err as Error).message } });
    }
  });
  return { ...state, siteUrl, close: () => close(server) };
}
