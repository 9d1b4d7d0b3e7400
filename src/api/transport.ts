import { UnreachableError } from '../errors.js';

/** The largest response body mkt reads (documented in docs/CLI.md); the relay's stream is not bound. */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** One HTTP exchange as the API client sees it. */
export interface HttpRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Milliseconds to connect. */
  connectTimeoutMs: number;
  /** Milliseconds from sending to the end of the response (what is left of the request's deadline). */
  responseTimeoutMs: number;
  /** The whole request's deadline as set (MKT_HTTP_TIMEOUT), for the message when it passes. */
  totalTimeoutMs?: number;
  signal?: AbortSignal;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

type Env = Record<string, string | undefined>;

/**
 * Whether a request to `url` goes through a proxy, by undici's rules (EnvHttpProxyAgent, which then
 * carries it): HTTP_PROXY for http:, HTTPS_PROXY else HTTP_PROXY for https: (either case), unless
 * NO_PROXY names its host (`*` for all; `host`, `.host` or `*.host` with its subdomains; `host:port`
 * on that port only). A request that goes direct never loads undici (~100 ms a command where a
 * proxy is set for other hosts, as it often is beside a local sandbox).
 */
function proxied(url: URL, env: Env): boolean {
  const { httpProxy, httpsProxy, noProxy } = proxies(env);
  if (!(url.protocol === 'https:' ? httpsProxy : httpProxy)) return false;
  if (noProxy === '*') return false;
  const host = url.host.replace(/:\d*$/, '').toLowerCase(); // an IPv6 address keeps its brackets
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  for (const entry of noProxy.split(/[,\s]/)) {
    if (!entry) continue;
    const withPort = /^(.+):(\d+)$/.exec(entry);
    const name = (withPort ? withPort[1]! : entry).replace(/^\*?\./, '').toLowerCase();
    const entryPort = withPort ? Number(withPort[2]) : 0;
    if (entryPort && entryPort !== port) continue;
    if (host === name || host.endsWith(`.${name}`)) return false;
  }
  return true;
}

/**
 * Sends a request. Direct connections use node:http (undici costs more to load than a whole `mkt
 * whoami`); a request that goes through a proxy (`proxied`), undici's EnvHttpProxyAgent.
 */
export async function send(req: HttpRequest, env: Env): Promise<HttpResponse> {
  try {
    return proxied(req.url, env) ? await sendViaUndici(req, env) : await sendDirect(req);
  } catch (err) {
    throw toUnreachable(err, req);
  }
}

async function sendDirect(req: HttpRequest): Promise<HttpResponse> {
  const mod = req.url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  return new Promise<HttpResponse>((resolve, reject) => {
    const request = mod.request(req.url, { method: req.method, headers: req.headers, signal: req.signal });
    const connectTimer = setTimeout(
      () => request.destroy(timeoutError('connect', req.connectTimeoutMs)),
      req.connectTimeoutMs,
    );
    const responseTimer = setTimeout(
      () => request.destroy(timeoutError('response', req.totalTimeoutMs ?? req.responseTimeoutMs)),
      req.responseTimeoutMs,
    );
    const done = () => {
      clearTimeout(connectTimer);
      clearTimeout(responseTimer);
    };
    request.on('socket', (socket) => {
      if (!socket.connecting) clearTimeout(connectTimer);
      else socket.once('connect', () => clearTimeout(connectTimer));
    });
    request.on('error', (err) => {
      done();
      reject(err);
    });
    request.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      if (Number(res.headers['content-length']) > MAX_RESPONSE_BYTES) request.destroy(tooLarge());
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_RESPONSE_BYTES) request.destroy(tooLarge());
        else chunks.push(c);
      });
      res.on('error', (err) => {
        done();
        reject(err);
      });
      res.on('end', () => {
        done();
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        });
      });
    });
    request.end(req.body);
  });
}

/** The proxies from the environment, upper or lower case (an https request falls back to HTTP_PROXY). */
function proxies(env: Env): { httpProxy?: string; httpsProxy?: string; noProxy: string } {
  return {
    httpProxy: env.HTTP_PROXY || env.http_proxy,
    httpsProxy: env.HTTPS_PROXY || env.https_proxy || env.HTTP_PROXY || env.http_proxy,
    noProxy: env.NO_PROXY ?? env.no_proxy ?? '',
  };
}

async function sendViaUndici(req: HttpRequest, env: Env): Promise<HttpResponse> {
  const { EnvHttpProxyAgent, request } = await import('undici');
  const dispatcher = new EnvHttpProxyAgent({ ...proxies(env), connect: { timeout: req.connectTimeoutMs } });
  try {
    const res = await request(req.url, {
      method: req.method as 'GET',
      headers: req.headers,
      body: req.body,
      dispatcher,
      signal: req.signal,
      headersTimeout: req.responseTimeoutMs,
      bodyTimeout: req.responseTimeoutMs,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > MAX_RESPONSE_BYTES) {
        res.body.destroy();
        throw tooLarge();
      }
      chunks.push(chunk as Buffer);
    }
    return { status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') };
  } finally {
    void dispatcher.close();
  }
}

function tooLarge(): Error {
  const err = new Error(`the response is larger than ${MAX_RESPONSE_BYTES / 1024 / 1024} MiB`);
  (err as NodeJS.ErrnoException).code = 'ERESPONSE_TOO_LARGE';
  return err;
}

function timeoutError(phase: 'connect' | 'response', ms: number): Error {
  const err = new Error(
    phase === 'connect'
      ? `connecting took over ${ms / 1000} s`
      : `no complete answer within ${ms / 1000} s, retries included (MKT_HTTP_TIMEOUT)`,
  );
  (err as NodeJS.ErrnoException).code = phase === 'connect' ? 'ETIMEDOUT_CONNECT' : 'ETIMEDOUT_RESPONSE';
  return err;
}

/** Codes of failures where the request may not have reached the server, or got no answer. */
export function isRetryableNetworkError(err: unknown): boolean {
  const code = (err as { cause?: NodeJS.ErrnoException }).cause?.code;
  return [
    'ECONNRESET',
    'EPIPE',
    'ETIMEDOUT_CONNECT',
    'ETIMEDOUT_RESPONSE',
    'UND_ERR_SOCKET',
    'UND_ERR_CONNECT_TIMEOUT',
    'UND_ERR_HEADERS_TIMEOUT',
    'UND_ERR_BODY_TIMEOUT',
    'EAI_AGAIN',
    'ETIMEDOUT',
  ].includes(code ?? '');
}

function toUnreachable(err: unknown, req: HttpRequest): Error {
  if ((err as Error).name === 'AbortError') return err as Error;
  const e = err as NodeJS.ErrnoException;
  const code = e.code ?? (e.cause as NodeJS.ErrnoException | undefined)?.code;
  const where = req.url.origin;
  const reason: Record<string, string> = {
    ECONNREFUSED: `nothing is listening at ${where}`,
    ENOTFOUND: `the host ${req.url.hostname} was not found`,
    EAI_AGAIN: `the host ${req.url.hostname} could not be looked up`,
    ECONNRESET: `the connection to ${where} was reset`,
  };
  const message =
    code === 'ERESPONSE_TOO_LARGE'
      ? `The response from ${where} is larger than ${MAX_RESPONSE_BYTES / 1024 / 1024} MiB, the most mkt reads; it was dropped.`
      : `Cannot reach ${where}: ${reason[code ?? ''] ?? e.message}.`;
  const wrapped = new UnreachableError(message, {
    cause: e,
    hints:
      code === 'ERESPONSE_TOO_LARGE'
        ? [`curl -sS ${req.url.href} | head -c 1000   (what is it sending?)`]
        : ['mkt config get site-url', 'mkt sandbox start   (for the local marketplace)'],
  });
  (wrapped as { cause?: unknown }).cause = { code, message: e.message };
  return wrapped;
}

/** A response whose body is read as it arrives (the relay's Server-Sent Events). */
export interface StreamResponse {
  status: number;
  body: NodeJS.ReadableStream & { setEncoding(encoding: BufferEncoding): unknown };
}

/**
 * Opens a long-lived GET: node:http(s) directly, or undici through HTTPS_PROXY / HTTP_PROXY
 * (honouring NO_PROXY), like `send`. Aborting `signal` closes it.
 */
export async function openStream(
  url: URL,
  headers: Record<string, string>,
  env: Env,
  signal: AbortSignal,
): Promise<StreamResponse> {
  if (proxied(url, env)) {
    const { EnvHttpProxyAgent, request } = await import('undici');
    const dispatcher = new EnvHttpProxyAgent(proxies(env));
    signal.addEventListener('abort', () => void dispatcher.destroy(), { once: true });
    const res = await request(url, { method: 'GET', headers, dispatcher, signal, bodyTimeout: 0 });
    return { status: res.statusCode, body: res.body };
  }
  const mod = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  return new Promise((resolve, reject) => {
    const req = mod.request(url, { method: 'GET', headers, signal });
    req.on('error', reject);
    req.on('response', (res) => resolve({ status: res.statusCode ?? 0, body: res }));
    req.end();
  });
}
