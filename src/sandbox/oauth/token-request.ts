import type { IncomingMessage } from 'node:http';
import { decodeUtf8, mediaType, readRawBody } from '../kernel/http/body.js';
import { oauthError, SandboxApiError } from '../kernel/http/problem.js';

/**
 * Reads the token request from a JSON or form body; every field must be a single string. Parameters
 * the endpoint does not know (`resource`, …) are ignored, repeated ones refused (RFC 6749 §3.2).
 */
export async function readTokenRequest(req: IncomingMessage): Promise<Map<string, string>> {
  let raw: Buffer;
  try {
    raw = await readRawBody(req);
  } catch (error) {
    if (error instanceof SandboxApiError) {
      throw oauthError(error.status, 'invalid_request', error.message);
    }
    throw error;
  }
  const type = mediaType(req);
  const text = decodeUtf8(raw);
  if (text === undefined) throw oauthError(400, 'invalid_request', 'The body is not valid UTF-8.');
  const fields = new Map<string, string>();
  if (type === 'application/x-www-form-urlencoded') {
    const params = new URLSearchParams(text);
    for (const key of new Set(params.keys())) {
      const values = params.getAll(key);
      if (values.length > 1) throw oauthError(400, 'invalid_request', `The parameter "${key}" is repeated.`);
      fields.set(key, values[0]!);
    }
  } else if (type === 'application/json') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw oauthError(400, 'invalid_request', 'The body is not valid JSON.');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw oauthError(400, 'invalid_request', 'The body must be a JSON object.');
    }
    for (const [key, value] of Object.entries(parsed)) {
      if (typeof value !== 'string')
        throw oauthError(400, 'invalid_request', `The field "${key}" must be a string.`);
      fields.set(key, value);
    }
  } else {
    throw oauthError(
      415,
      'invalid_request',
      'Send the body as application/json or application/x-www-form-urlencoded.',
    );
  }
  return fields;
}

/** A required parameter of the token request. */
export function need(fields: Map<string, string>, name: string): string {
  const value = fields.get(name);
  if (value === undefined || value === '') {
    throw oauthError(400, 'invalid_request', `The parameter "${name}" is missing.`);
  }
  return value;
}
