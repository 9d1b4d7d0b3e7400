import type { IncomingMessage } from 'node:http';
import { invalidRequest, SandboxApiError } from './problem.js';

/** Largest request body the sandbox accepts (1 MiB). */
export const MAX_REQUEST_BYTES = 1024 * 1024;
/** Past this many bytes the connection is dropped instead of draining the upload. */
const DRAIN_LIMIT_BYTES = 16 * MAX_REQUEST_BYTES;

const tooLarge = () =>
  new SandboxApiError(413, 'payload_too_large', 'The request body is larger than 1 MiB.');

/** Reads the whole body, failing with 413 past {@link MAX_REQUEST_BYTES}. */
export function readRawBody(req: IncomingMessage): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? '0');
  // Answered before a byte is read (the front guard refuses it first; this keeps every reader safe).
  if (Number.isFinite(declared) && declared > MAX_REQUEST_BYTES) return Promise.reject(tooLarge());
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  // Events, not `for await`: the async iterator costs every request several promises.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error?: unknown) => {
      req.off('data', onData).off('end', finish).off('error', finish).off('close', onClose);
      if (error !== undefined) reject(error);
      else if (size > MAX_REQUEST_BYTES) reject(tooLarge());
      else resolve(Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > DRAIN_LIMIT_BYTES) {
        req.socket.destroy();
        finish();
      } else if (size <= MAX_REQUEST_BYTES) chunks.push(chunk);
    };
    const onClose = () => {
      if (!req.readableEnded) finish(new Error('The request was closed before its body ended.'));
    };
    req.on('data', onData).on('end', finish).on('error', finish).on('close', onClose);
  });
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

/** True unless the Content-Type declares a charset other than UTF-8 (JSON is UTF-8: RFC 8259 §8.1). */
function declaresUtf8(req: IncomingMessage): boolean {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(req.headers['content-type'] ?? '')?.[1];
  return charset === undefined || /^utf-?8$/i.test(charset);
}

/** Reads a JSON object body; an empty body counts as `{}`. */
export async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  const raw = await readRawBody(req);
  if (raw.length === 0) return {};
  if (mediaType(req) !== 'application/json' || !declaresUtf8(req)) {
    throw new SandboxApiError(415, 'unsupported_media_type', 'Send the body as application/json in UTF-8.');
  }
  const text = decodeUtf8(raw);
  let parsed: unknown;
  try {
    if (text === undefined) throw new Error('not UTF-8');
    parsed = JSON.parse(text);
  } catch {
    throw new SandboxApiError(400, 'invalid_json', 'The request body is not valid JSON.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw invalidRequest('The request body must be a JSON object.');
  }
  return parsed as Record<string, unknown>;
}
