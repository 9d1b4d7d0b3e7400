import type { Deps } from '../deps.js';
import { UsageError } from '../errors.js';
import { readInput } from '../platform/input.js';
import type { ApiResponse } from './client.js';

/** Key segments that would reach Object.prototype instead of the body. */
const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'constructor', 'prototype']);

/** Turns `key=value` strings into an object: typed scalars, `key[]=v` arrays, `a.b=v` nesting. */
function parseFields(fields: string[]): Record<string, unknown> {
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
    const bad = path.find((part) => FORBIDDEN_SEGMENTS.has(part) || part === '');
    if (bad !== undefined) {
      throw new UsageError(
        `--field ${field}: ${bad ? `"${bad}" cannot be a field name` : 'a key has an empty part'}.`,
        { code: 'invalid_field' },
      );
    }
    let target = out;
    for (const part of path.slice(0, -1)) {
      const next = Object.hasOwn(target, part) ? target[part] : undefined;
      if (next === undefined) target = target[part] = {} as Record<string, unknown>;
      else if (typeof next === 'object' && next !== null && !Array.isArray(next))
        target = next as Record<string, unknown>;
      else throw new UsageError(`--field ${field}: "${part}" is already a value, not an object.`);
    }
    const last = path[path.length - 1]!;
    if (append) {
      const existing = Object.hasOwn(target, last) ? target[last] : undefined;
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
    const text = await readInput(deps, input.input);
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
