// A small generator of values from JSON Schema (the subset an OpenAPI 3.1 document made by zod uses),
// seeded so that a run can be repeated, for the document-driven fuzz run (test/openapi/fuzz.test.ts).
// Each value is then checked by ajv against the same schema: what is called valid is valid.

type Json = Record<string, unknown>;

/** A seeded generator of numbers in [0, 1) (mulberry32). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Sampler {
  random: () => number;
  /** `#/components/...` → the schema it names. */
  resolve(ref: string): Json;
  /** A realistic value for a property or parameter of this name, when there is one. */
  hint(name: string): unknown;
}

const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const int = (s: Sampler, lo: number, hi: number) => lo + Math.floor(s.random() * (hi - lo + 1));
const pick = <T>(s: Sampler, items: readonly T[]): T => items[Math.floor(s.random() * items.length)]!;
const word = (s: Sampler, lo = 1, hi = 12) =>
  Array.from({ length: int(s, lo, hi) }, () => pick(s, [...ALNUM])).join('');

/** A string that `pattern` matches: literals, classes, `.`, groups with `|`, quantifiers (capped). */
export function fromPattern(s: Sampler, pattern: string): string {
  let i = 0;
  const CLASSES: Record<string, string> = { d: '0123456789', w: `${ALNUM}_`, s: ' ' };
  const alternatives = (): string => {
    const branches: string[][] = [[]];
    while (i < pattern.length && pattern[i] !== ')') {
      if (pattern[i] === '|') {
        i++;
        branches.push([]);
        continue;
      }
      branches[branches.length - 1]!.push(quantified());
    }
    return pick(s, branches).join('');
  };
  const atom = (): (() => string) => {
    const c = pattern[i++]!;
    if (c === '^' || c === '$') return () => '';
    if (c === '(') {
      if (pattern.startsWith('?:', i)) i += 2;
      const start = i;
      let depth = 0;
      for (; i < pattern.length; i++) {
        if (pattern[i] === '\\') i++;
        else if (pattern[i] === '(') depth++;
        else if (pattern[i] === ')' && depth-- === 0) break;
      }
      const inner = pattern.slice(start, i++);
      return () => fromPattern(s, inner);
    }
    if (c === '[') {
      const negate = pattern[i] === '^';
      if (negate) i++;
      let set = '';
      while (pattern[i] !== ']') {
        let ch = pattern[i++]!;
        if (ch === '\\') {
          const e = pattern[i++]!;
          ch = CLASSES[e] ?? e;
        }
        if (pattern[i] === '-' && pattern[i + 1] !== ']') {
          const to = pattern[i + 1]!;
          i += 2;
          for (let k = ch.charCodeAt(0); k <= to.charCodeAt(0); k++) set += String.fromCharCode(k);
        } else set += ch;
      }
      i++;
      const chars = negate ? [...ALNUM].filter((x) => !set.includes(x)) : [...set];
      return () => pick(s, chars);
    }
    if (c === '\\') {
      const e = pattern[i++]!;
      const set = CLASSES[e];
      return set ? () => pick(s, [...set]) : () => e;
    }
    if (c === '.') return () => pick(s, [...ALNUM]);
    return () => c;
  };
  const quantified = (): string => {
    const make = atom();
    let [lo, hi] = [1, 1];
    const q = pattern[i];
    if (q === '?') [lo, hi] = [0, 1];
    else if (q === '*') [lo, hi] = [0, 4];
    else if (q === '+') [lo, hi] = [1, 5];
    else if (q === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i))!;
      lo = Number(m[1]);
      hi = m[2] === undefined ? lo : m[3] ? Number(m[3]) : lo + 4;
      i += m[0].length - 1;
    }
    if (q && '?*+{'.includes(q)) i++;
    return Array.from({ length: int(s, lo, Math.min(hi, lo + 8)) }, make).join('');
  };
  return alternatives();
}

const FORMATS: Record<string, (s: Sampler) => string> = {
  'date-time': (s) => new Date(Date.UTC(2026, 0, 1) + int(s, 0, 3e9) * 1000).toISOString(),
  date: (s) => new Date(Date.UTC(2026, 0, 1) + int(s, 0, 3e4) * 86_400_000).toISOString().slice(0, 10),
  email: (s) => `${word(s, 1, 8).toLowerCase()}@sandbox.test`,
  // Only loopback addresses: a URL the sandbox keeps (a webhook URL) is one it may call.
  uri: (s) => `http://127.0.0.1:9/${word(s, 0, 8)}`,
  url: (s) => `http://127.0.0.1:9/${word(s, 0, 8)}`,
  uuid: (s) =>
    Array.from({ length: 32 }, () => pick(s, [...'0123456789abcdef']))
      .join('')
      .replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-4$3-a$4-')
      .slice(0, 36),
};

/** A value for `schema` (`name`: the property or parameter it is for). */
export function sample(s: Sampler, schema: Json | boolean | undefined, name = '', depth = 0): unknown {
  if (schema === undefined || schema === true || schema === false) return s.hint(name) ?? word(s);
  if (typeof schema.$ref === 'string') return sample(s, s.resolve(schema.$ref), name, depth);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return pick(s, schema.enum);
  const branches = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (branches) {
    const solid = branches.filter((b) => b.type !== 'null');
    return sample(s, pick(s, s.random() < 0.85 && solid.length > 0 ? solid : branches), name, depth);
  }
  if (Array.isArray(schema.allOf)) {
    const parts = (schema.allOf as Json[]).map((b) => sample(s, b, name, depth));
    return parts.every((p) => p && typeof p === 'object') ? Object.assign({}, ...parts) : parts[0];
  }
  let type = schema.type as string | string[] | undefined;
  if (Array.isArray(type)) {
    const solid = type.filter((t) => t !== 'null');
    type = s.random() < 0.9 && solid.length > 0 ? pick(s, solid) : pick(s, type);
  }
  type ??= schema.properties ? 'object' : schema.items ? 'array' : undefined;
  const hinted = s.hint(name);
  switch (type) {
    case 'null':
      return null;
    case 'boolean':
      return s.random() < 0.5;
    case 'integer':
    case 'number': {
      if (typeof hinted === 'number' && s.random() < 0.7) return hinted;
      const bound = (inclusive: unknown, exclusive: unknown, step: number) =>
        typeof inclusive === 'number'
          ? inclusive
          : typeof exclusive === 'number'
            ? exclusive + step
            : undefined;
      // Unbounded numbers stay small: a clock advanced by 10^9 seconds is a test of patience.
      const lo = Math.ceil(bound(schema.minimum, schema.exclusiveMinimum, 1) ?? 0);
      const hi = Math.floor(bound(schema.maximum, schema.exclusiveMaximum, -1) ?? lo + 1000);
      const n = int(s, lo, Math.max(lo, hi));
      return type === 'number' && s.random() < 0.3 ? n + 0.5 : n;
    }
    case 'array': {
      const lo = Number(schema.minItems ?? 0);
      const hi = Math.min(Number(schema.maxItems ?? lo + 3), lo + 3);
      const items = Array.from({ length: int(s, lo, hi) }, () =>
        sample(s, schema.items as Json, name, depth + 1),
      );
      return schema.uniqueItems ? [...new Map(items.map((v) => [JSON.stringify(v), v])).values()] : items;
    }
    case 'object': {
      const out: Json = {};
      const required = new Set((schema.required as string[] | undefined) ?? []);
      for (const [key, sub] of Object.entries((schema.properties ?? {}) as Record<string, Json>))
        if (required.has(key) || (depth < 3 && s.random() < 0.5)) out[key] = sample(s, sub, key, depth + 1);
      return out;
    }
    case 'string': {
      if (hinted !== undefined && typeof hinted === 'string' && s.random() < 0.75) return hinted;
      let text: string;
      if (typeof schema.format === 'string' && FORMATS[schema.format]) text = FORMATS[schema.format]!(s);
      else if (typeof schema.pattern === 'string') text = fromPattern(s, schema.pattern);
      else {
        const lo = Number(schema.minLength ?? 1);
        const hi = Math.min(Number(schema.maxLength ?? lo + 12), lo + 24);
        text = word(s, lo, Math.max(lo, hi));
      }
      // Never a URL to another host: the sandbox may call a URL it keeps.
      return /^[a-z][a-z0-9+.-]*:\/\//i.test(text) && !/^https?:\/\/127\.0\.0\.1[:/]/.test(text)
        ? `http://127.0.0.1:9/${word(s)}`
        : text;
    }
    default:
      return hinted ?? word(s);
  }
}
