import { createMiddleware } from 'hono/factory';
import { z } from 'zod';
import { readJsonObject } from './body.js';
import type { SandboxEnv } from './env.js';
import { invalidRequest } from './problem.js';

// Lone surrogates are not Unicode (they would turn into U+FFFD on disk, so a value would change
// between the answer and a restart); control characters have no place in a name or an id.
const NOT_TEXT = /[\p{Cs}\p{Cc}]/u;

/** The same rule as a pattern the document shows (JSON Schema patterns have no \p{…} everywhere). */
// eslint-disable-next-line no-control-regex -- the pattern is about control characters
const CONTROL_FREE = /^[^\u0000-\u001F\u007F-\u009F]*$/;
const TEXT_MESSAGE = 'must be Unicode text without control characters';

/**
 * A string of Unicode text without control characters, 1 to `max` characters, matching `pattern`
 * when given; every rule but the lone surrogates' is one the document shows (length, pattern).
 */
export function text(max = 1000, pattern?: RegExp) {
  const base = pattern
    ? z.string().refine((v) => !NOT_TEXT.test(v), TEXT_MESSAGE)
    : z
        .string()
        .regex(CONTROL_FREE, TEXT_MESSAGE)
        .refine((v) => !NOT_TEXT.test(v), TEXT_MESSAGE);
  const sized = base.min(1, 'must not be empty').max(max, `must be at most ${max} characters`);
  return pattern ? sized.regex(pattern, 'has an invalid format') : sized;
}

/** An integer within bounds. */
export const int = (min: number, max: number) =>
  z
    .int({ error: 'must be an integer' })
    .min(min, `must be between ${min} and ${max}`)
    .max(max, `must be between ${min} and ${max}`);

/** The URL rule as a pattern for the document: https, or http on a loopback host. */
const URL_CHARS = '[^#@\\u0000-\\u0020\\u007F-\\u009F]';
const HTTPS_OR_LOOPBACK = `^(https://${URL_CHARS}+|http://(127\\.0\\.0\\.1|\\[::1\\]|localhost)([:/?]${URL_CHARS}*)?)$`;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** True for http://127.0.0.1, http://[::1] and http://localhost addresses. */
export function isLoopbackUrl(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

function urlProblem(value: string, httpsOrLoopbackOnly: boolean): string | undefined {
  if (NOT_TEXT.test(value)) return 'must be a URL without control characters';
  if (value.length > 2000) return 'must be at most 2000 characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.hash !== '' || value.includes('#')) return 'must not have a fragment';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  if (httpsOrLoopbackOnly && url.protocol === 'http:' && !isLoopbackUrl(url)) {
    return 'must use https unless it is a loopback address';
  }
  return undefined;
}

/** An absolute http(s) URL without a fragment or credentials. */
export function httpUrl(options: { httpsOrLoopbackOnly?: boolean } = {}) {
  return z
    .string()
    .superRefine((v, ctx) => {
      const problem = urlProblem(v, options.httpsOrLoopbackOnly ?? false);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .meta({
      format: 'uri',
      maxLength: 2000,
      pattern: options.httpsOrLoopbackOnly ? HTTPS_OR_LOOPBACK : `^https?://${URL_CHARS}+$`,
    });
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  int: 'an integer',
};

/** One sentence naming the field, for a body (`Field "x" …`) or the query (`Query parameter "x" …`). */
function describe(issue: z.core.$ZodIssue, where: 'body' | 'query', input: unknown): string {
  const noun = where === 'body' ? 'Field' : 'Query parameter';
  if (issue.code === 'unrecognized_keys') {
    return where === 'body'
      ? `Unknown field "${issue.keys[0]}".`
      : `Unknown query parameter "${issue.keys[0]}".`;
  }
  const field = issue.path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : i ? `.${String(p)}` : String(p)))
    .join('');
  let value: unknown = input;
  for (const p of issue.path) value = (value as Record<PropertyKey, unknown> | undefined)?.[p as PropertyKey];
  if (issue.code === 'invalid_type') {
    if (value === undefined) return `${noun} "${field}" is required.`;
    return `${noun} "${field}" must be ${TYPE_NAMES[issue.expected] ?? issue.expected}.`;
  }
  if (issue.code === 'invalid_value') {
    return `${noun} "${field}" must be one of: ${issue.values.map(String).join(', ')}.`;
  }
  if (issue.code === 'too_big' && issue.origin === 'array') {
    return `${noun} "${field}" must have at most ${String(issue.maximum)} items.`;
  }
  return `${noun} "${field}" ${issue.message.replace(/\.$/, '')}.`;
}

/**
 * Reads the JSON object body (an empty body is `{}`; 413, 415 and `invalid_json` as in
 * docs/PROTOCOL.md) and checks it against `schema` before the handler runs; the handler reads
 * `c.get('body')`, typed by the schema. Made from a route's declaration (./declare.ts).
 */
export function checkJsonBody<S extends z.ZodType>(schema: S) {
  return createMiddleware<SandboxEnv & { Variables: { body: z.output<S> } }>(async (c, next) => {
    const raw = await readJsonObject(c.env.incoming);
    const parsed = schema.safeParse(raw);
    if (!parsed.success) throw invalidRequest(describe(parsed.error.issues[0]!, 'body', raw));
    c.set('body', parsed.data);
    await next();
  });
}

/**
 * Checks the query string against `schema` (a strict object of optional strings): unknown and
 * repeated parameters are 400s; the handler reads `c.get('query')`. Made from a route's declaration.
 */
export function checkQuery<S extends z.ZodType>(schema: S) {
  // Most requests have no query: the schema's answer to none is worked out once.
  let none: z.ZodSafeParseResult<z.output<S>> | undefined;
  return createMiddleware<SandboxEnv & { Variables: { query: z.output<S> } }>(async (c, next) => {
    // The query as sent (`/path?query`), read without building the whole URL again.
    const target = c.env.incoming.url ?? '';
    const asSent = target.startsWith('/') && !target.includes('#');
    if (asSent && !target.includes('?')) {
      if (!none) {
        none = schema.safeParse({});
        if (none.success) Object.freeze(none.data); // shared by every such request
      }
      if (!none.success) throw invalidRequest(describe(none.error.issues[0]!, 'query', {}));
      c.set('query', none.data);
      return next();
    }
    const params = asSent
      ? new URLSearchParams(target.slice(target.indexOf('?') + 1))
      : new URL(c.req.url).searchParams;
    const raw: Record<string, string> = {};
    for (const key of new Set(params.keys())) {
      if (params.getAll(key).length > 1) {
        const known = schema instanceof z.ZodObject && key in schema.shape;
        throw invalidRequest(
          known ? `Query parameter "${key}" is repeated.` : `Unknown query parameter "${key}".`,
        );
      }
      raw[key] = params.get(key)!;
    }
    const parsed = schema.safeParse(raw);
    if (!parsed.success) throw invalidRequest(describe(parsed.error.issues[0]!, 'query', raw));
    c.set('query', parsed.data);
    await next();
  });
}

/** Checks a value inside a body (such as an event's `data`) against `schema`; a 400 says where. */
export function checkPart<S extends z.ZodType>(schema: S, value: unknown, part: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw invalidRequest(`In "${part}": ${describe(parsed.error.issues[0]!, 'body', value)}`);
  return parsed.data;
}

/** A query of no parameters: any parameter is refused (400). */
export const NO_QUERY = z.strictObject({});

/** `?limit=`: a page of 1 to 100 (20 when absent); the handler reads the text (./paging.ts). */
export const limitParam = z
  .string()
  .meta({ type: 'integer', minimum: 1, maximum: 100, default: 20 } as never)
  .optional();
/** `?cursor=`: as a list's `next_cursor` gave it. */
export const cursorParam = z
  .string()
  .min(1)
  .meta({ description: 'A `next_cursor` this server gave' })
  .optional();

/** The query of a list route (docs/PROTOCOL.md, Lists). */
export const LIST_QUERY = z.strictObject({ limit: limitParam, cursor: cursorParam });
