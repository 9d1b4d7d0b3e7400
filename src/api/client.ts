import { HEADER } from '../wire.js';
import { ApiError, AuthError, MktError, RateLimitError, UnreachableError, withRequestId } from '../errors.js';
import type { Clock } from '../platform/clock.js';
import { notFound, refusal, requestNames, stateHints } from '../refusal.js';
import { isLoopback } from '../urls.js';
import { Pacer, limitFor } from './pacer.js';
import { redactBody, redactHeaders } from './redact.js';
import { backoff, describeError, parseBody, retryAfterMs, timeoutFromEnv } from './responses.js';
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
  /** Where it came from: env, keychain, file, or login (a token or key being checked). */
  source: string;
}

/** The request headers that carry a credential: the one place that maps one to the other. */
function credentialHeaders(credential: Credential | null): Record<string, string> {
  if (!credential) return {};
  return credential.kind === 'token'
    ? { authorization: `Bearer ${credential.secret}` }
    : { [HEADER.apiKey]: credential.secret };
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
  /** Where the site URL came from (`--site-url`, `MKT_SITE_URL`, a profile, the default), for messages. */
  siteSource?: string;
  /** Global flags a printed hint must repeat to run in the same situation (e.g. `--site-url …`). */
  hintFlags?: string;
  /** The error for a 401 to a request sent with no credential: "not signed in", and how to sign in. */
  notSignedIn?: () => Promise<MktError>;
  maxRetries?: number;
  connectTimeoutMs?: number;
  /** The most a whole request may take, retries included (default: MKT_HTTP_TIMEOUT, else 30 s). */
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
    const deadline = this.options.clock.now() + this.timeoutMs();
    for (;;) {
      const res = await this.sendWithRetries(method, url, options, credential, deadline).catch(
        (err: unknown) => {
          throw err instanceof UnreachableError && url.origin === new URL(this.siteUrl).origin
            ? this.unreachable(err, url)
            : err;
        },
      );
      if (res.status === 401 && credential && !refreshed && this.options.auth?.afterUnauthorized) {
        refreshed = true;
        const next = await this.options.auth.afterUnauthorized(credential);
        if (next) {
          credential = next;
          continue;
        }
      }
      if (res.status === 401 && !credential && options.auth !== false && this.options.notSignedIn)
        throw await this.options.notSignedIn();
      const data = parseBody(res);
      if (res.status >= 300 && !options.allowErrorStatus)
        throw withRequestId(
          this.errorFor(res, data, credential, url, options.json),
          res.headers[HEADER.requestId],
        );
      return { status: res.status, headers: res.headers, data: data as T, text: res.text };
    }
  }

  private async sendWithRetries(
    method: string,
    url: URL,
    options: RequestOptions,
    credential: Credential | null,
    deadline: number,
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
        () =>
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
            responseTimeoutMs: Math.max(1, deadline - clock.now()),
            totalTimeoutMs: this.timeoutMs(),
            signal: options.signal,
          },
          this.options.env,
        );
      } catch (err) {
        this.log(() => `< ${method} ${url.href} failed: ${(err as Error).message}`);
        // A POST or PATCH that may have reached the server is not repeated: it could act twice.
        if (
          err instanceof UnreachableError &&
          SAFE_METHODS.has(method) &&
          isRetryableNetworkError(err) &&
          attempt < maxRetries &&
          clock.now() + backoff(0) < deadline
        ) {
          await clock.sleep(Math.min(backoff(attempt), deadline - clock.now()), options.signal);
          continue;
        }
        throw err;
      }
      pacer?.observe(res.headers);
      this.log(
        () =>
          `< ${res.status} ${method} ${url.href} (${clock.now() - started} ms${requestIdNote(res.headers)}) ${JSON.stringify(redactHeaders(res.headers))} ${redactBody(res.text.slice(0, 2000))}`,
      );
      const retryable =
        res.status === 429 || ([502, 503, 504].includes(res.status) && SAFE_METHODS.has(method));
      if (!retryable || attempt >= maxRetries) return res;
      const wait = retryAfterMs(res.headers, clock.now()) ?? backoff(attempt);
      // A wait the server asks for beyond our limit, or beyond the deadline: its answer stands.
      if (wait > (this.options.maxRetryWaitMs ?? 60_000) || clock.now() + wait >= deadline) return res;
      this.log(() => `  retrying in ${Math.round(wait)} ms (attempt ${attempt + 2} of ${maxRetries + 1})`);
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
      this.log(() => `> GET ${url.href} ${JSON.stringify(redactHeaders(headers))} (stream)`);
      const res = await openStream(url, headers, this.options.env, options.signal);
      this.log(() => `< ${res.status} GET ${url.href} (stream)`);
      if (res.status !== 401 || !credential || renewed || !this.options.auth?.afterUnauthorized) return res;
      const next = await this.options.auth.afterUnauthorized(credential);
      if (!next) return res;
      res.body.resume(); // the refusal's body is not needed
      credential = next;
    }
  }

  /** The most one request may take, retries included. */
  private timeoutMs(): number {
    return this.options.responseTimeoutMs ?? timeoutFromEnv(this.options.env) ?? 30_000;
  }

  private pacerFor(secret: string | undefined): Pacer | undefined {
    const limit = limitFor(secret);
    if (!secret || !limit) return undefined;
    let pacer = this.pacers.get(secret);
    if (!pacer) this.pacers.set(secret, (pacer = new Pacer(limit, this.options.clock)));
    return pacer;
  }

  /** Cannot reach the site: says where its URL came from, and for a local address the sandbox to start. */
  private unreachable(err: UnreachableError, url: URL): UnreachableError {
    const local = isLoopback(url);
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    const from = this.options.siteSource
      ? ` (the site URL ${this.siteUrl} comes from ${this.options.siteSource})`
      : '';
    const hints = local
      ? [`mkt sandbox start --port ${port}   (the local marketplace, in another terminal)`]
      : [`curl -sS ${this.siteUrl}   (is it up, and is this its address?)`];
    return new UnreachableError(`${err.message.replace(/\.$/, '')}${from}.`, { cause: err.cause, hints });
  }

  /** A 403 as one true sentence, with hints for this credential (src/refusal.ts). */
  private forbidden(
    res: HttpResponse,
    code: string,
    message: string,
    credential: Credential | null,
    url?: URL,
  ): MktError {
    const challenge = String(res.headers['www-authenticate'] ?? '');
    return refusal({
      code,
      message,
      challengeScope: /scope="([^"\s]+)/.exec(challenge)?.[1],
      credential,
      path: url?.pathname ?? '',
      user: url?.searchParams.get('user_id') ?? undefined,
      flags: this.hintFlags(),
    });
  }

  private hintFlags(): string {
    return this.options.hintFlags ? ` ${this.options.hintFlags}` : '';
  }

  /** The MktError for an error response: what is wrong, and the command that fixes it. */
  errorFor(
    res: HttpResponse,
    data: unknown,
    credential: Credential | null,
    url?: URL,
    sent?: unknown,
  ): MktError {
    const { code, message } = describeError(res, data);
    const flags = this.hintFlags();
    if (res.status === 401) {
      return new AuthError(code || 'unauthorized', `Authentication was refused: ${message}`, {
        hints: unauthorizedHints(credential, flags),
      });
    }
    if (res.status === 403) return this.forbidden(res, code, message, credential, url);
    const hints = stateHints(code, message, requestNames(url, sent), flags);
    if (res.status === 404 && !hints.length) return notFound(404, code, message, url?.pathname ?? '', flags);
    if (res.status === 429) {
      const after = retryAfterMs(res.headers, this.options.clock.now());
      return new RateLimitError(
        `Rate limited by ${this.siteUrl}: ${message}${after ? ` Try again in ${Math.ceil(after / 1000)} s.` : ''}`,
      );
    }
    if (res.status < 400) {
      // Never followed: the credential would go along to wherever it points.
      const location = String(res.headers.location ?? '(none)');
      return new ApiError(
        res.status,
        'redirect',
        `${url?.href ?? this.siteUrl} answered ${res.status} with Location ${location}; mkt does not follow redirects.`,
        { hints: [`mkt config get site-url   (is ${this.siteUrl} the marketplace's address?)`] },
      );
    }
    return new ApiError(res.status, code || `http_${res.status}`, message, { hints });
  }

  /** A `--verbose` line, made only when there is a sink for it (redacting a body parses it). */
  private log(line: () => string): void {
    if (this.options.log) this.options.log(line());
  }
}

/** ", req_…" for a verbose line, when the server gave the response an id. */
function requestIdNote(headers: HttpResponse['headers']): string {
  const id = headers[HEADER.requestId];
  return typeof id === 'string' ? `, ${id}` : '';
}

/**
 * What fixes a refused credential. One from the environment overrides every stored sign-in, so
 * `mkt login` cannot help while it is set: the hint names the variable to fix or unset.
 */
function unauthorizedHints(credential: Credential | null, flags: string): string[] {
  if (credential?.source === 'env') {
    const name = credential.kind === 'token' ? 'MKT_ACCESS_TOKEN' : 'MKT_API_KEY';
    return [
      `unset ${name}   (it overrides the stored sign-in; or set it to a valid ${credential.kind === 'token' ? 'access token' : 'key'})`,
    ];
  }
  return credential?.kind === 'token' || !credential
    ? [`mkt login${flags}`]
    : [`mkt login --with-api-key${flags} < key.txt`];
}
