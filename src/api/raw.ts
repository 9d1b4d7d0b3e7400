import { readFile } from 'node:fs/promises';
import type { Deps } from '../deps.js';
import { UsageError } from '../errors.js';
import type { ApiResponse } from './client.js';

/** Reads all of a stream as text. */
export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** Turns `key=value` strings into an object: typed scalars, `key[]=v` arrays, `a.b=v` nesting. */
export function parseFields(fields: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const eq = field.indexOf('=');
    if (eq <= 0) throw new UsageError(`--field expects key=value, got "${field}".`);
    let key = field.slice(0, eq);
    const raw = field.slice(eq + 1);
    const value =
      raw === 'true'
        ? true
        : raw === 'false'
          ? false
          : raw === 'null'
            ? null
            : /^-?\d+(\.\d+)?$/.test(raw)
              ? Number(raw)
              : raw;
    const append = key.endsWith('[]');
    if (append) key = key.slice(0, -2);
    const path = key.split('.');
    let target = out;
    for (const part of path.slice(0, -1)) {
      const next = target[part];
      if (next === undefined) target = target[part] = {} as Record<string, unknown>;
      else if (typeof next === 'object' && next !== null && !Array.isArray(next))
        target = next as Record<string, unknown>;
      else throw new UsageError(`--field ${field}: "${part}" is already a value, not an object.`);
    }
    const last = path[path.length - 1]!;
    if (append) {
      const existing = target[last];
      target[last] = Array.isArray(existing) ? [...existing, value] : [value];
    } else target[last] = value;
  }
  return out;
}

/** `mkt api`: one raw authenticated request. */
export async function callApi(
  deps: Deps,
  input: { method: string; path: string; fields: string[]; input?: string },
): Promise<ApiResponse> {
  const method = input.method.toUpperCase();
  if (!input.path.startsWith('/'))
    throw new UsageError(`PATH must start with "/", like /whoami (got "${input.path}").`);
  const hasBody = ['POST', 'PUT', 'PATCH'].includes(method);
  let body: string | undefined;
  let query: Record<string, string> | undefined;
  if (input.input !== undefined) {
    const text = input.input === '-' ? await readAll(deps.stdin) : await readFileOrUsage(input.input);
    try {
      JSON.parse(text);
    } catch (err) {
      throw new UsageError(
        `${input.input === '-' ? 'stdin' : input.input} is not JSON: ${(err as Error).message}`,
      );
    }
    body = text;
  } else if (input.fields.length) {
    const fields = parseFields(input.fields);
    if (hasBody) body = JSON.stringify(fields);
    else
      query = Object.fromEntries(
        Object.entries(fields).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)]),
      );
  }
  return deps.api.request(method, input.path, {
    query,
    body,
    headers: body === undefined ? undefined : { 'content-type': 'application/json' },
  });
}

async function readFileOrUsage(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(
      `Cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`,
    );
  }
}
