import { invalidRequest } from './errors.js';

/** Checks one value and returns it typed, or throws a 400 naming the field. */
export type Check<T> = (value: unknown, field: string) => T;

interface Field<T, R extends boolean> {
  check: Check<T>;
  required: R;
}

/** A field that must be present. */
export function required<T>(check: Check<T>): Field<T, true> {
  return { check, required: true };
}

/** A field that may be left out. */
export function optional<T>(check: Check<T>): Field<T, false> {
  return { check, required: false };
}

type Spec = Record<string, Field<unknown, boolean>>;
type Parsed<S extends Spec> = {
  [K in keyof S]: S[K] extends Field<infer T, true>
    ? T
    : S[K] extends Field<infer T, false>
      ? T | undefined
      : never;
};

/** Validates a JSON object against a spec: unknown fields, missing fields and wrong types are 400s. */
export function parseFields<S extends Spec>(body: Record<string, unknown>, spec: S): Parsed<S> {
  for (const key of Object.keys(body)) {
    if (!Object.hasOwn(spec, key)) throw invalidRequest(`Unknown field "${key}".`);
  }
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(spec)) {
    if (!Object.hasOwn(body, key) || body[key] === undefined) {
      if (field.required) throw invalidRequest(`Field "${key}" is required.`);
      continue;
    }
    out[key] = field.check(body[key], key);
  }
  return out as Parsed<S>;
}

interface StringRules {
  min?: number;
  max?: number;
  pattern?: RegExp;
  oneOf?: readonly string[];
}

// Lone surrogates are not Unicode (they would turn into U+FFFD on disk, so a value would change
// between the answer and a restart); control characters have no place in a name or an id.
const NOT_TEXT = /[\p{Cs}\p{Cc}]/u;

/** A string of Unicode text without control characters, with optional length, pattern and value rules. */
export function str(rules: StringRules = {}): Check<string> {
  const { min = 1, max = 1000, pattern, oneOf } = rules;
  return (value, field) => {
    if (typeof value !== 'string') throw invalidRequest(`Field "${field}" must be a string.`);
    if (NOT_TEXT.test(value)) {
      throw invalidRequest(`Field "${field}" must be Unicode text without control characters.`);
    }
    if (value.length < min) throw invalidRequest(`Field "${field}" must not be empty.`);
    if (value.length > max) throw invalidRequest(`Field "${field}" must be at most ${max} characters.`);
    if (oneOf && !oneOf.includes(value)) {
      throw invalidRequest(`Field "${field}" must be one of: ${oneOf.join(', ')}.`);
    }
    if (pattern && !pattern.test(value)) throw invalidRequest(`Field "${field}" has an invalid format.`);
    return value;
  };
}

/** An integer within bounds. */
export function int(min: number, max: number): Check<number> {
  return (value, field) => {
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
      throw invalidRequest(`Field "${field}" must be an integer.`);
    }
    if (value < min || value > max)
      throw invalidRequest(`Field "${field}" must be between ${min} and ${max}.`);
    return value;
  };
}

/** A boolean. */
export const bool: Check<boolean> = (value, field) => {
  if (typeof value !== 'boolean') throw invalidRequest(`Field "${field}" must be true or false.`);
  return value;
};

/** `null` or a value passing `check`. */
export function nullable<T>(check: Check<T>): Check<T | null> {
  return (value, field) => (value === null ? null : check(value, field));
}

/** An array whose items all pass `check`, at most `max` long. */
export function arrayOf<T>(check: Check<T>, max = 100): Check<T[]> {
  return (value, field) => {
    if (!Array.isArray(value)) throw invalidRequest(`Field "${field}" must be an array.`);
    if (value.length > max) throw invalidRequest(`Field "${field}" must have at most ${max} items.`);
    return value.map((item, i) => check(item, `${field}[${i}]`));
  };
}

/** A JSON object whose fields follow `spec`. */
export function objectOf<S extends Spec>(spec: S): Check<Parsed<S>> {
  return (value, field) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw invalidRequest(`Field "${field}" must be an object.`);
    }
    try {
      return parseFields(value as Record<string, unknown>, spec);
    } catch (error) {
      if (error instanceof Error) error.message = `In "${field}": ${error.message}`;
      throw error;
    }
  };
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** True for http://127.0.0.1, http://[::1] and http://localhost addresses. */
export function isLoopbackUrl(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/** An absolute http(s) URL without a fragment or credentials. */
export function httpUrl(options: { httpsOrLoopbackOnly?: boolean } = {}): Check<string> {
  return (value, field) => {
    if (typeof value !== 'string') throw invalidRequest(`Field "${field}" must be a URL string.`);
    if (NOT_TEXT.test(value))
      throw invalidRequest(`Field "${field}" must be a URL without control characters.`);
    if (value.length > 2000) throw invalidRequest(`Field "${field}" must be at most 2000 characters.`);
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw invalidRequest(`Field "${field}" must be an absolute URL.`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw invalidRequest(`Field "${field}" must be an http or https URL.`);
    }
    if (url.hash !== '' || value.includes('#'))
      throw invalidRequest(`Field "${field}" must not have a fragment.`);
    if (url.username !== '' || url.password !== '') {
      throw invalidRequest(`Field "${field}" must not contain credentials.`);
    }
    if (options.httpsOrLoopbackOnly && url.protocol === 'http:' && !isLoopbackUrl(url)) {
      throw invalidRequest(`Field "${field}" must use https unless it is a loopback address.`);
    }
    return value;
  };
}
