import type { IncomingMessage, ServerResponse } from 'node:http';

/** Largest request body the sandbox accepts (1 MiB). */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Past this many bytes the connection is dropped instead of draining the upload. */
const DRAIN_LIMIT_BYTES = 16 * MAX_BODY_BYTES;

/** An API failure with an HTTP status and a stable snake_case code (docs/PROTOCOL.md, Errors). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** An OAuth token-endpoint failure, answered in RFC 6749 section 5.2 form. */
export class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'OAuthError';
  }
}

/** Shorthand for a 400 `invalid_request` naming the offending field. */
export function invalidRequest(message: string): ApiError {
  return new ApiError(400, 'invalid_request', message);
}

/** Reads the whole body, failing with 413 past {@link MAX_BODY_BYTES}. */
export async function readRawBody(req: IncomingMessage): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (Number.isFinite(declared) && declared > DRAIN_LIMIT_BYTES) {
    req.socket.destroy();
    throw new ApiError(413, 'payload_too_large', 'The request body is larger than 1 MiB.');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      tooLarge = true;
      if (size > DRAIN_LIMIT_BYTES) {
        req.socket.destroy();
        break;
      }
      continue;
    }
    chunks.push(chunk);
  }
  if (tooLarge) throw new ApiError(413, 'payload_too_large', 'The request body is larger than 1 MiB.');
  return Buffer.concat(chunks);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes UTF-8 strictly; undecodable bytes are a client error, not garbage. */
export function decodeUtf8(raw: Buffer): string | undefined {
  try {
    return utf8.decode(raw);
  } catch {
    return undefined;
  }
}

/** The media type of a request without parameters, lowercased ('' when absent). */
export function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** Reads a JSON object body; an empty body counts as `{}`. */
export async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  const raw = await readRawBody(req);
  if (raw.length === 0) return {};
  if (mediaType(req) !== 'application/json') {
    throw new ApiError(415, 'unsupported_media_type', 'Send the body as application/json.');
  }
  const text = decodeUtf8(raw);
  let parsed: unknown;
  try {
    if (text === undefined) throw new Error('not UTF-8');
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError(400, 'invalid_json', 'The request body is not valid JSON.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw invalidRequest('The request body must be a JSON object.');
  }
  return parsed as Record<string, unknown>;
}

/** Writes a JSON response (compact) with the given status and extra headers. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (status === 204 || body === undefined) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/** Writes an HTML page. */
export function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': String(Buffer.byteLength(html)),
    'cache-control': 'no-store',
    'x-frame-options': 'DENY',
    'content-security-policy':
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http: https:; frame-src http: https:",
  });
  res.end(html);
}
