import type { ApiResponse, RequestOptions } from '../api/client.js';
import { describeError, excerpt } from '../api/responses.js';
import { redactBody } from '../api/redact.js';
import type { Deps } from '../deps.js';
import { ApiError, AuthError, MktError } from '../errors.js';

/** What the client learned about a site's OAuth server (docs/DECISIONS.md §4), remembered per site. */
export interface SiteInfo {
  token_endpoint?: string;
  authorization_endpoint?: string;
  /** How the token endpoint wants its body: JSON (the published form) or form-encoded (RFC 6749). */
  token_encoding?: 'json' | 'form';
  /** How the client secret travels: in the body, or HTTP Basic (RFC 6749 §2.3.1). */
  token_auth?: 'post' | 'basic';
  /** RFC 8628 device authorization endpoint, when the metadata names one. */
  device_authorization_endpoint?: string;
  /** Whether RFC 8414 metadata was looked for (found or not). */
  metadata_checked?: boolean;
}

/** The API client, and where what it learns about a site is remembered (nowhere without `config`). */
type TokenDeps = Pick<Deps, 'api'> & Partial<Pick<Deps, 'config' | 'hintFlags'>>;

/** The site's OAuth endpoints: from RFC 8414 metadata when the server publishes it, else the interface's paths. */
export async function oauthEndpoints(
  deps: TokenDeps,
): Promise<{ authorize: string; token: string[]; info: SiteInfo }> {
  const { siteUrl, baseUrl } = deps.api;
  let info = (await deps.config?.siteInfo(siteUrl)) ?? {};
  if (!info.metadata_checked) {
    info = { ...info, ...(await discover(deps)), metadata_checked: true };
    await deps.config?.rememberSite(siteUrl, info);
  }
  const token = [`${siteUrl}/api/oauth/token`, `${baseUrl}/oauth/token`];
  if (info.token_endpoint) token.sort((a) => (a === info.token_endpoint ? -1 : 1));
  if (info.token_endpoint && !token.includes(info.token_endpoint)) token.unshift(info.token_endpoint);
  return { authorize: info.authorization_endpoint ?? `${siteUrl}/oauth/authorize`, token, info };
}

/** RFC 8414 metadata (`/.well-known/oauth-authorization-server`, inserted before the site's path). */
async function discover(deps: TokenDeps): Promise<SiteInfo> {
  const site = new URL(deps.api.siteUrl);
  const path = site.pathname.replace(/\/+$/, '');
  let meta: Record<string, unknown> | undefined;
  // RFC 8414 first; an OpenID provider publishes the same fields at its own address (RFC 8414 §5).
  for (const url of [
    `${site.origin}/.well-known/oauth-authorization-server${path}`,
    `${site.origin}${path}/.well-known/openid-configuration`,
  ]) {
    const res = await deps.api.request<Record<string, unknown>>('GET', url, {
      auth: false,
      allowErrorStatus: true,
    });
    meta = res.status === 200 && res.data && typeof res.data === 'object' ? res.data : undefined;
    if (meta) break;
  }
  const sameOrigin = (v: unknown) =>
    typeof v === 'string' && URL.canParse(v) && new URL(v).origin === site.origin ? v : undefined;
  const token_endpoint = sameOrigin(meta?.token_endpoint);
  if (!meta || !token_endpoint) return {};
  const methods = Array.isArray(meta.token_endpoint_auth_methods_supported)
    ? meta.token_endpoint_auth_methods_supported
    : ['client_secret_basic']; // RFC 8414 §2: the default when the field is absent
  return {
    token_endpoint,
    authorization_endpoint: sameOrigin(meta.authorization_endpoint),
    device_authorization_endpoint: sameOrigin(meta.device_authorization_endpoint),
    token_auth: methods.includes('client_secret_post')
      ? 'post'
      : methods.includes('client_secret_basic')
        ? 'basic'
        : undefined,
  };
}

/**
 * The site's RFC 8628 device authorization endpoint, or undefined when its metadata names none
 * (looked up again when what was remembered has none: the server may have gained it since).
 */
export async function deviceEndpoint(deps: TokenDeps): Promise<string | undefined> {
  const { info } = await oauthEndpoints(deps);
  if (info.device_authorization_endpoint) return info.device_authorization_endpoint;
  const fresh = { ...info, ...(await discover(deps)), metadata_checked: true };
  await deps.config?.rememberSite(deps.api.siteUrl, fresh);
  return fresh.device_authorization_endpoint;
}

/**
 * POSTs a device authorization request (RFC 8628 §3.1: form-encoded, the client authenticated as at
 * the token endpoint) and answers its JSON, or the server's error.
 */
export async function deviceAuthorization(
  deps: TokenDeps,
  endpoint: string,
  body: Record<string, string>,
): Promise<Record<string, unknown>> {
  const { info } = await oauthEndpoints(deps);
  let auth = info.token_auth ?? 'post';
  for (let attempt = 0; ; attempt++) {
    const res = await deps.api.request<Record<string, unknown>>('POST', endpoint, {
      ...tokenBody(body, 'form', auth),
      auth: false,
      allowErrorStatus: true,
    });
    if (attempt === 0 && auth === 'post' && body.client_secret && wantsBasic(res)) {
      auth = 'basic';
      continue;
    }
    if (res.status >= 400) throw tokenError(deps, endpoint, res, 'The device authorization endpoint');
    if (!res.data || typeof res.data !== 'object')
      throw new MktError('bad_device_response', `${endpoint} answered ${res.status} without JSON.`);
    return res.data;
  }
}

/**
 * POSTs to the OAuth token endpoint (docs/DECISIONS.md §4): the remembered or published one, else
 * `{site_url}/api/oauth/token` then `{base_url}/oauth/token` on 404/405; JSON first, form-encoded
 * when the server asks for it, the client secret by HTTP Basic when the server asks for that.
 * What worked is remembered per site. The server rejects such attempts before it looks at the code.
 */
export async function tokenRequest<T = Record<string, unknown>>(
  deps: TokenDeps,
  body: Record<string, string>,
  /** Keeps what a success answered (a rotated refresh token) before anything else is written. */
  keep?: (res: ApiResponse<T>) => Promise<void>,
): Promise<ApiResponse<T>> {
  const { token: candidates, info } = await oauthEndpoints(deps);
  let encoding = info.token_encoding ?? 'json';
  let auth = info.token_auth ?? 'post';
  let last: ApiResponse<unknown> | undefined;
  for (const endpoint of candidates) {
    for (let attempt = 0; attempt < 3; attempt++) {
      const res = await deps.api.request<unknown>('POST', endpoint, {
        ...tokenBody(body, encoding, auth),
        auth: false,
        allowErrorStatus: true,
      });
      last = res;
      if (res.status === 404 || res.status === 405) break;
      if (encoding === 'json' && wantsForm(res)) {
        encoding = 'form';
        continue;
      }
      if (auth === 'post' && body.client_secret && wantsBasic(res)) {
        auth = 'basic';
        continue;
      }
      // The endpoint answered; how to talk to it is learned only from a success (a wrong secret
      // refused by Basic too says nothing about Basic).
      const learned: SiteInfo =
        res.status < 400
          ? { token_endpoint: endpoint, token_encoding: encoding, token_auth: auth }
          : { token_endpoint: endpoint };
      const data = res.data as Record<string, unknown> | undefined;
      const good = res.status < 400 && typeof data?.access_token === 'string' && data.access_token !== '';
      const unusable = good ? tokenProblem(data!) : undefined;
      if (unusable)
        throw new MktError(
          'bad_token_response',
          `${endpoint} answered a token mkt cannot use: ${unusable}. Nothing was stored.`,
        );
      // A refresh rotates the refresh token: the new one is stored first (a crash later keeps it).
      if (good) await keep?.(res as ApiResponse<T>);
      if (Object.entries(learned).some(([k, v]) => info[k as keyof SiteInfo] !== v))
        await deps.config?.rememberSite(deps.api.siteUrl, { ...info, ...learned });
      if (res.status >= 400) throw tokenError(deps, endpoint, res);
      if (!good) {
        throw new MktError(
          'bad_token_response',
          `${endpoint} answered ${res.status} without an access_token${excerpt(redactBody(res.text)) || ' (an empty body)'}.`,
        );
      }
      return res as ApiResponse<T>;
    }
    if (last && last.status !== 404 && last.status !== 405) throw tokenError(deps, endpoint, last);
  }
  const flags = deps.hintFlags ? ` ${deps.hintFlags}` : '';
  throw new ApiError(
    last?.status ?? 404,
    'token_endpoint_not_found',
    `${deps.api.siteUrl} has no OAuth token endpoint at ${candidates.join(' or ')}.`,
    { hints: [`mkt config get site-url${flags}   (is this the marketplace's root address?)`] },
  );
}

/** A visible ASCII token (RFC 6750 b64token, and what any HTTP header may carry). */
const TOKEN_CHARS = /^[\x21-\x7e]+$/;

/**
 * Why a token response cannot be used, or undefined: a `token_type` other than Bearer (RFC 6749
 * §7.1: sending it as Bearer would be wrong), or a token holding a character no header may carry.
 */
function tokenProblem(data: Record<string, unknown>): string | undefined {
  const type = data.token_type;
  if (type !== undefined && (typeof type !== 'string' || type.toLowerCase() !== 'bearer'))
    return `its token_type is ${JSON.stringify(type).slice(0, 40)}, and mkt sends only Bearer tokens`;
  for (const field of ['access_token', 'refresh_token'])
    if (typeof data[field] === 'string' && !TOKEN_CHARS.test(data[field]))
      return `its ${field} holds a space or a control character, which no HTTP header may carry`;
  return undefined;
}

/** A token endpoint failure with the server's `error` and `error_description`, or status and excerpt. */
function tokenError(
  deps: TokenDeps,
  endpoint: string,
  res: ApiResponse<unknown>,
  what = 'The token endpoint',
): MktError {
  const { code, message } = describeError(res, res.data);
  const text = `${what} ${endpoint} answered ${res.status}: ${message}`;
  if (res.status === 429) return deps.api.errorFor(res, res.data, null);
  if (res.status >= 500) return new ApiError(res.status, code || `http_${res.status}`, text);
  return new AuthError(code || `http_${res.status}`, text, { hints: [] });
}

/** The token request as JSON or form (RFC 6749 §4.1.3), the client secret in it or as HTTP Basic. */
function tokenBody(
  body: Record<string, string>,
  encoding: 'json' | 'form',
  auth: 'post' | 'basic',
): Pick<RequestOptions, 'json' | 'body' | 'headers'> {
  const fields = { ...body };
  const headers: Record<string, string> = {};
  if (auth === 'basic' && fields.client_id && fields.client_secret !== undefined) {
    // RFC 6749 §2.3.1: id and secret are form-urlencoded before they are joined and base64-encoded.
    const form = (v: string) => new URLSearchParams({ v }).toString().slice(2);
    headers.authorization = `Basic ${Buffer.from(`${form(fields.client_id)}:${form(fields.client_secret)}`).toString('base64')}`;
    delete fields.client_id;
    delete fields.client_secret;
  }
  if (encoding === 'json') return { json: fields, headers };
  headers['content-type'] = 'application/x-www-form-urlencoded';
  return { body: new URLSearchParams(fields).toString(), headers };
}

/** The server takes only form-encoded token requests: 415, or 400 invalid_request naming the encoding. */
function wantsForm(res: ApiResponse<unknown>): boolean {
  if (res.status === 415) return true;
  const data = res.data as { error?: unknown } | undefined;
  return (
    res.status === 400 &&
    data?.error === 'invalid_request' &&
    /urlencoded|content[- ]?type|form[- ]encod/i.test(res.text)
  );
}

/** The server wants the client secret by HTTP Basic: 401 with `WWW-Authenticate: Basic`, or says so. */
function wantsBasic(res: ApiResponse<unknown>): boolean {
  if (res.status !== 401 && res.status !== 400) return false;
  const challenge = String(res.headers['www-authenticate'] ?? '');
  const data = res.data as { error?: unknown } | undefined;
  return (
    (res.status === 401 && /^\s*basic\b/i.test(challenge)) ||
    (data?.error === 'invalid_client' && /\bbasic\b/i.test(res.text))
  );
}
