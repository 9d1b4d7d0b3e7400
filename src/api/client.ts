import { HEADER } from '../wire.js';
import { ApiError, AuthError, MktError, RateLimitError, UnreachableError } from '../errors.js';
import type { Clock } from '../platform/clock.js';
import { Pacer, limitFor } from './pacer.js';
import { redactBody, redactHeaders } from './redact.js';
import {
  isRetryableNetworkError,
  openStream,
  send,
  type HttpResponse,
  type StreamResponse,
} from './transport.js';

/** What the client authenticates with. */
export interface Credential {
  kind: 'token' | 'test_key' | 'live_key';
  secret: string;
  /** Where it came from: env, keychain, file, memory. */
  source: string;
}

/** The request headers that carry a credential: the one place that maps one to the other. */
export function credentialHeaders(credential: Credential | null): Record<string, string> {
  if (!credential) return {};
  return credential.kind === 'token'
    ? { authorization: `Bearer ${credential.secret}` }
    : { [HEADER.apiKey]: credential.secret };
}

/** What the client learned about a site's OAuth server (docs/DECISIONS.md §4), remembered per site. */
export interface SiteInfo {
  token_endpoint?: string;
  authorization_endpoint?: string;
  /** How the token endpoint wants its body: JSON (the published form) or form-encoded (RFC 6749). */
  token_encoding?: 'json' | 'form';
  /** How the client secret travels: in the body, or HTTP Basic (RFC 6749 §2.3.1). */
  token_auth?: 'post' | 'basic';
  /** Whether RFC 8414 metadata was looked for (found or not). */
  metadata_checked?: boolean;
}

/** Supplies credentials; the auth module adds refresh. */
export interface AuthSource {
  credential(): Promise<Credential | null>;
  /** After a 401 with `failed`: a fresh credential (refreshed token) or null. */
  afterUnauthorized?(failed: Credential): Promise<Credential | null>;
}

export interface ApiClientOptions {
  siteUrl: string;
  auth?: AuthSource;
  env: Record<string, string | undefined>;
  clock: Clock;
  userAgent: string;
  /** `--verbose` sink: one line per request and response, secrets redacted. */
  log?: (line: string) => void;
  /** Where what the client learned about a site's OAuth server is remembered. */
  siteMemory?: {
    get(siteUrl: string): Promise<SiteInfo>;
    remember(siteUrl: string, info: SiteInfo): Promise<void>;
  };
  /** Where the site URL came from (`--site-url`, `MKT_SITE_URL`, a profile, the default), for messages. */
  siteSource?: string;
  /** Global flags a printed hint must repeat to run in the same situation (e.g. `--site-url …`). */
  hintFlags?: string;
  maxRetries?: number;
  connectTimeoutMs?: number;
  responseTimeoutMs?: number;
  /** Longest Retry-After we are willing to wait, in ms. */
  maxRetryWaitMs?: number;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  /** A JSON body (serialized here) or a raw string/Buffer with its own content type. */
  json?: unknown;
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** false: send no credential (OAuth endpoints). */
  auth?: boolean;
  /** Send this credential instead of the session's (checking one before it is stored). */
  credential?: Credential;
  /** Answer error statuses instead of throwing. */
  allowErrorStatus?: boolean;
  signal?: AbortSignal;
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  data: T;
  text: string;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/** The marketplace API: {base_url} requests with auth, retries, pacing, timeouts and clear errors. */
export class ApiClient {
  readonly siteUrl: string;
  readonly baseUrl: string;
  private readonly pacers = new Map<string, Pacer>();

  constructor(private readonly options: ApiClientOptions) {
    this.siteUrl = options.siteUrl.replace(/\/+$/, '');
    this.baseUrl = `${this.siteUrl}/api/v1`;
  }

  /** A URL for `path`: absolute URLs stay, `/x` is relative to {base_url}. */
  url(path: string, query?: RequestOptions['query']): URL {
    const url = /^https?:\/\//.test(path)
      ? new URL(path)
      : new URL(this.baseUrl + (path.startsWith('/') ? path : `/${path}`));
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    return url;
  }

  get<T = unknown>(path: string, options: RequestOptions = {}) {
    return this.request<T>('GET', path, options);
  }
  post<T = unknown>(path: string, json?: unknown, options: RequestOptions = {}) {
    return this.request<T>('POST', path, { ...options, json });
  }
  patch<T = unknown>(path: string, json?: unknown, options: RequestOptions = {}) {
    return this.request<T>('PATCH', path, { ...options, json });
  }
  delete<T = unknown>(path: string, options: RequestOptions = {}) {
    return this.request<T>('DELETE', path, options);
  }

  /** Every item of a list endpoint, following `next_cursor`; a bare array is a one-page list. */
  async list<T = unknown>(path: string, options: RequestOptions = {}): Promise<T[]> {
    const items: T[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10_000; page++) {
      const res = await this.get<unknown>(path, {
        ...options,
        query: { ...options.query, limit: 100, cursor },
      });
      const body = res.data as { data?: T[]; has_more?: boolean; next_cursor?: string | null } | T[];
      if (Array.isArray(body)) return [...items, ...body];
      items.push(...(body.data ?? []));
      if (!body.has_more || !body.next_cursor) return items;
      cursor = body.next_cursor;
    }
    return items;
  }

  /** Sends one request with retries; throws an MktError for error statuses unless allowed. */
  async request<T = unknown>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
    method = method.toUpperCase();
    const url = this.url(path, options.query);
    let credential =
      options.auth === false ? null : (options.credential ?? (await this.options.auth?.credential()) ?? null);
    let refreshed = options.credential !== undefined;
    for (;;) {
      const res = await this.sendWithRetries(method, url, options, credential).catch((err: unknown) => {
        throw err instanceof UnreachableError && url.origin === new URL(this.siteUrl).origin
          ? this.unreachable(err, url)
          : err;
      });
      if (res.status === 401 && credential && !refreshed && this.options.auth?.afterUnauthorized) {
        refreshed = true;
        const next = await this.options.auth.afterUnauthorized(credential);
        if (next) {
          credential = next;
          continue;
        }
      }
      const data = parseBody(res);
      if (res.status >= 400 && !options.allowErrorStatus) throw this.errorFor(res, data, credential, url);
      return { status: res.status, headers: res.headers, data: data as T, text: res.text };
    }
  }

  private async sendWithRetries(
    method: string,
    url: URL,
    options: RequestOptions,
    credential: Credential | null,
  ): Promise<HttpResponse> {
    const { clock } = this.options;
    const maxRetries = this.options.maxRetries ?? 4;
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': this.options.userAgent,
      ...options.headers,
      ...credentialHeaders(credential),
    };
    let body = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] ??= 'application/json';
    }
    const pacer = this.pacerFor(credential?.secret);
    for (let attempt = 0; ; attempt++) {
      await pacer?.take();
      this.log(
        `> ${method} ${url.href} ${JSON.stringify(redactHeaders(headers))}${body ? ` ${redactBody(String(body))}` : ''}`,
      );
      const started = clock.now();
      let res: HttpResponse;
      try {
        res = await send(
          {
            method,
            url,
            headers,
            body,
            connectTimeoutMs: this.options.connectTimeoutMs ?? 10_000,
            responseTimeoutMs: this.options.responseTimeoutMs ?? timeoutFromEnv(this.options.env) ?? 30_000,
            signal: options.signal,
          },
          this.options.env,
        );
      } catch (err) {
        this.log(`< ${method} ${url.href} failed: ${(err as Error).message}`);
        // A POST or PATCH that may have reached the server is not repeated: it could act twice.
        if (
          err instanceof UnreachableError &&
          SAFE_METHODS.has(method) &&
          isRetryableNetworkError(err) &&
          attempt < maxRetries
        ) {
          await clock.sleep(backoff(attempt), options.signal);
          continue;
        }
        throw err;
      }
      pacer?.observe(res.headers);
      this.log(
        `< ${res.status} ${method} ${url.href} (${clock.now() - started} ms) ${JSON.stringify(redactHeaders(res.headers))} ${redactBody(res.text.slice(0, 2000))}`,
      );
      const retryable =
        res.status === 429 || ([502, 503, 504].includes(res.status) && SAFE_METHODS.has(method));
      if (!retryable || attempt >= maxRetries) return res;
      const wait = retryAfterMs(res.headers, clock.now()) ?? backoff(attempt);
      if (wait > (this.options.maxRetryWaitMs ?? 60_000)) return res;
      this.log(`  retrying in ${Math.round(wait)} ms (attempt ${attempt + 2} of ${maxRetries + 1})`);
      await clock.sleep(wait, options.signal);
    }
  }

  /**
   * Opens a long-lived GET (the relay's Server-Sent Events) with the session's credential; after a
   * 401 the auth source renews it once and the stream is opened again. The caller reads the status.
   */
  async stream(
    path: string,
    options: { headers?: Record<string, string>; signal: AbortSignal },
  ): Promise<StreamResponse> {
    const url = this.url(path);
    let credential = (await this.options.auth?.credential()) ?? null;
    for (let renewed = false; ; renewed = true) {
      const headers = {
        'user-agent': this.options.userAgent,
        ...options.headers,
        ...credentialHeaders(credential),
      };
      this.log(`> GET ${url.href} ${JSON.stringify(redactHeaders(headers))} (stream)`);
      const res = await openStream(url, headers, this.options.env, options.signal);
      this.log(`< ${res.status} GET ${url.href} (stream)`);
      if (res.status !== 401 || !credential || renewed || !this.options.auth?.afterUnauthorized) return res;
      const next = await this.options.auth.afterUnauthorized(credential);
      if (!next) return res;
      res.body.resume(); // the refusal's body is not needed
      credential = next;
    }
  }

  private pacerFor(secret: string | undefined): Pacer | undefined {
    const limit = limitFor(secret);
    if (!secret || !limit) return undefined;
    let pacer = this.pacers.get(secret);
    if (!pacer) this.pacers.set(secret, (pacer = new Pacer(limit, this.options.clock)));
    return pacer;
  }

  /** The site's OAuth endpoints: from RFC 8414 metadata when the server publishes it, else the interface's paths. */
  async oauthEndpoints(): Promise<{ authorize: string; token: string[]; info: SiteInfo }> {
    const memory = this.options.siteMemory;
    let info = (await memory?.get(this.siteUrl)) ?? {};
    if (!info.metadata_checked) {
      info = { ...info, ...(await this.discover()), metadata_checked: true };
      await memory?.remember(this.siteUrl, info);
    }
    const token = [`${this.siteUrl}/api/oauth/token`, `${this.baseUrl}/oauth/token`];
    if (info.token_endpoint) token.sort((a) => (a === info.token_endpoint ? -1 : 1));
    if (info.token_endpoint && !token.includes(info.token_endpoint)) token.unshift(info.token_endpoint);
    return { authorize: info.authorization_endpoint ?? `${this.siteUrl}/oauth/authorize`, token, info };
  }

  /** RFC 8414 metadata (`/.well-known/oauth-authorization-server`, inserted before the site's path). */
  private async discover(): Promise<SiteInfo> {
    const site = new URL(this.siteUrl);
    const url = `${site.origin}/.well-known/oauth-authorization-server${site.pathname.replace(/\/+$/, '')}`;
    const res = await this.request<Record<string, unknown>>('GET', url, {
      auth: false,
      allowErrorStatus: true,
    });
    const meta = res.status === 200 && res.data && typeof res.data === 'object' ? res.data : undefined;
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
      token_auth: methods.includes('client_secret_post')
        ? 'post'
        : methods.includes('client_secret_basic')
          ? 'basic'
          : undefined,
    };
  }

  /**
   * POSTs to the OAuth token endpoint (docs/DECISIONS.md §4): the remembered or published one, else
   * `{site_url}/api/oauth/token` then `{base_url}/oauth/token` on 404/405; JSON first, form-encoded
   * when the server asks for it, the client secret by HTTP Basic when the server asks for that.
   * What worked is remembered per site. The server rejects such attempts before it looks at the code.
   */
  async tokenRequest<T = Record<string, unknown>>(body: Record<string, string>): Promise<ApiResponse<T>> {
    const { token: candidates, info } = await this.oauthEndpoints();
    let encoding = info.token_encoding ?? 'json';
    let auth = info.token_auth ?? 'post';
    let last: ApiResponse<unknown> | undefined;
    for (const endpoint of candidates) {
      for (let attempt = 0; attempt < 3; attempt++) {
        const res = await this.request<unknown>('POST', endpoint, {
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
        if (Object.entries(learned).some(([k, v]) => info[k as keyof SiteInfo] !== v))
          await this.options.siteMemory?.remember(this.siteUrl, { ...info, ...learned });
        if (res.status >= 400) throw this.tokenError(endpoint, res);
        const data = res.data as Record<string, unknown> | undefined;
        if (typeof data?.access_token !== 'string' || !data.access_token) {
          throw new MktError(
            'bad_token_response',
            `${endpoint} answered ${res.status} without an access_token${excerpt(redactBody(res.text)) || ' (an empty body)'}.`,
          );
        }
        return res as ApiResponse<T>;
      }
      if (last && last.status !== 404 && last.status !== 405) throw this.tokenError(endpoint, last);
    }
    throw new ApiError(
      last?.status ?? 404,
      'token_endpoint_not_found',
      `${this.siteUrl} has no OAuth token endpoint at ${candidates.join(' or ')}.`,
      { hints: [`mkt config get site-url${this.hintFlags()}   (is this the marketplace's root address?)`] },
    );
  }

  /** A token endpoint failure with the server's `error` and `error_description`, or status and excerpt. */
  private tokenError(endpoint: string, res: ApiResponse<unknown>): MktError {
    const { code, message } = describeError(res, res.data);
    const text = `The token endpoint ${endpoint} answered ${res.status}: ${message}`;
    if (res.status === 429) return this.errorFor(res, res.data, null);
    if (res.status >= 500) return new ApiError(res.status, code || `http_${res.status}`, text);
    return new AuthError(code || `http_${res.status}`, text, { hints: [] });
  }

  /** Cannot reach the site: says where its URL came from, and for a local address the sandbox to start. */
  private unreachable(err: UnreachableError, url: URL): UnreachableError {
    const local = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    const from = this.options.siteSource
      ? ` (the site URL ${this.siteUrl} comes from ${this.options.siteSource})`
      : '';
    const hints = local
      ? [`mkt sandbox start --port ${port}   (the local marketplace, in another terminal)`]
      : [`curl -sS ${this.siteUrl}   (is it up, and is this its address?)`];
    return new UnreachableError(`${err.message.replace(/\.$/, '')}${from}.`, { cause: err.cause, hints });
  }

  /** A 403 that says what is missing: a scope (and the login that adds it), or ownership of the app. */
  private forbidden(
    res: HttpResponse,
    code: string,
    message: string,
    credential: Credential | null,
    url?: URL,
  ): MktError {
    const flags = this.hintFlags();
    const challenge = String(res.headers['www-authenticate'] ?? '');
    const scope =
      /scope="([^"\s]+)/.exec(challenge)?.[1] ??
      (/scope/i.test(message) ? /"?\b([a-z][\w-]*:[a-z][\w-]*)\b"?/i.exec(message)?.[1] : undefined);
    if (scope && credential?.kind === 'token') {
      const fix =
        credential.source === 'env'
          ? `unset MKT_ACCESS_TOKEN; mkt login${flags} --scope ${scope}`
          : `mkt login${flags} --scope ${scope}   (keeps your other scopes and adds ${scope})`;
      return new AuthError(
        'insufficient_scope',
        `Not allowed: ${message} Your sign-in lacks the ${scope} scope.`,
        {
          hints: [fix],
        },
      );
    }
    const app = /\/apps\/(app_[\w-]+)/.exec(url?.pathname ?? '')?.[1];
    if (/\bown|belong|another app|not your/i.test(message)) {
      const user = (credential as { token?: { user?: { id: string; email?: string } } } | null)?.token?.user;
      const target = app ?? 'this app';
      const whose =
        credential?.kind !== 'token'
          ? `${target} is not the app of this API key (a key acts only for its own app).`
          : `${target} belongs to another developer${user ? `, not to ${user.email ?? user.id} (${user.id}), as whom you are signed in` : ''}.`;
      return new AuthError(code || 'forbidden', `Not allowed: ${message} ${whose}`, {
        hints: [`mkt apps list${flags}   (the apps you can manage)`, `mkt apps use${flags} APP_ID`],
      });
    }
    return new AuthError(code || 'forbidden', `Not allowed: ${message}`, {
      hints: [
        `mkt auth status${flags}`,
        `mkt login${flags} --scope apps:write   (to manage apps as their developer)`,
      ],
    });
  }

  private hintFlags(): string {
    return this.options.hintFlags ? ` ${this.options.hintFlags}` : '';
  }

  private errorFor(res: HttpResponse, data: unknown, credential: Credential | null, url?: URL): MktError {
    const { code, message } = describeError(res, data);
    const flags = this.hintFlags();
    if (res.status === 401) {
      return new AuthError(code || 'unauthorized', `Authentication was refused: ${message}`, {
        hints:
          credential?.kind === 'token' || !credential
            ? [`mkt login${flags}`]
            : [`mkt login --with-api-key${flags} < key.txt`],
      });
    }
    if (res.status === 403) return this.forbidden(res, code, message, credential, url);
    if (res.status === 429) {
      const after = retryAfterMs(res.headers, this.options.clock.now());
      return new RateLimitError(
        `Rate limited by ${this.siteUrl}: ${message}${after ? ` Try again in ${Math.ceil(after / 1000)} s.` : ''}`,
      );
    }
    return new ApiError(res.status, code || `http_${res.status}`, message);
  }

  private log(line: string): void {
    this.options.log?.(line);
  }
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

function parseBody(res: HttpResponse): unknown {
  if (!res.text) return undefined;
  const type = String(res.headers['content-type'] ?? '');
  if (!type.includes('json') && !/^\s*[[{]/.test(res.text)) return undefined;
  try {
    return JSON.parse(res.text);
  } catch {
    return undefined;
  }
}

/** Understands our error JSON, OAuth errors and `{message}`; anything else is status plus an excerpt. */
export function describeError(res: HttpResponse, data: unknown): { code: string; message: string } {
  const body = data as Record<string, unknown> | undefined;
  const err = body?.error;
  if (err && typeof err === 'object') {
    const e = err as Record<string, unknown>;
    return { code: String(e.code ?? ''), message: String(e.message ?? e.code ?? `HTTP ${res.status}`) };
  }
  if (typeof err === 'string') {
    const description = typeof body?.error_description === 'string' ? `: ${body.error_description}` : '';
    return { code: err, message: `${err}${description}` };
  }
  if (typeof body?.message === 'string') return { code: '', message: body.message };
  return { code: '', message: `HTTP ${res.status}${excerpt(res.text)}` };
}

function excerpt(text: string): string {
  const plain = text
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (!plain) return '';
  return `: ${plain.length > 200 ? `${plain.slice(0, 200)}…` : plain}`;
}

/** Retry-After in ms (seconds or an HTTP date), or undefined. */
export function retryAfterMs(
  headers: Record<string, string | string[] | undefined>,
  now: number,
): number | undefined {
  const value = headers['retry-after'];
  if (typeof value !== 'string' || !value.trim()) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

/** Exponential backoff with full jitter: 0.5–1 × 250 ms × 2^attempt, at most 8 s. */
function backoff(attempt: number): number {
  const base = Math.min(8000, 250 * 2 ** attempt);
  return base / 2 + Math.random() * (base / 2);
}

function timeoutFromEnv(env: Record<string, string | undefined>): number | undefined {
  const seconds = Number(env.MKT_HTTP_TIMEOUT);
  return env.MKT_HTTP_TIMEOUT && Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
}
