// The door for BYTES FROM OUTSIDE mkt (an HTTP answer, a registry's, a fixtures file, a journal,
// stdin). It guarantees: no more than the caller's bound is ever held, counted after decompression
// (fetch's body is already decoded: a gzip bomb counts at its real size), the source is stopped at
// once past it; JSON is refused past a nesting depth before it is parsed (no stack overflow); each
// refusal is a RefusedError naming what was read ("the registry's answer", a file, a field) and the
// limit.
import { RefusedError } from './refused.js';

/** What is read and its bound, for the message of a refusal. */
export interface Bound {
  /** "the registry's answer", "the fixtures file seed.json": in the message. */
  what: string;
  maxBytes: number;
}

const tooLarge = (bound: Bound, seen: number) =>
  new RefusedError(
    'input_too_large',
    `${bound.what} is larger than ${bound.maxBytes} bytes (at least ${seen} came); mkt stopped reading it.`,
  );

/**
 * All of `source` (a Node stream, a web stream, any async iterable of bytes or text) as one Buffer,
 * refused past `maxBytes`: the source is destroyed (or cancelled) at once, nothing more is kept.
 */
export async function readBounded(
  source: AsyncIterable<Uint8Array | string> & { destroy?: () => void; cancel?: () => Promise<void> },
  bound: Bound,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of source) {
    const bytes =
      typeof chunk === 'string'
        ? Buffer.from(chunk)
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    size += bytes.length;
    if (size > bound.maxBytes) {
      source.destroy?.();
      throw tooLarge(bound, size);
    }
    chunks.push(Buffer.from(bytes));
  }
  return Buffer.concat(chunks, size);
}

/** The text of a fetch Response, decoded (decompressed) and refused past `maxBytes` as {@link readBounded}. */
export async function readResponseBounded(res: Response, bound: Bound): Promise<string> {
  if (!res.body) return '';
  const declared = Number(res.headers.get('content-length'));
  // A declared size over the bound (identity encoding) is refused before a byte is read.
  if (!res.headers.get('content-encoding') && declared > bound.maxBytes) {
    await res.body.cancel().catch(() => undefined);
    throw tooLarge(bound, declared);
  }
  const reader = res.body as unknown as AsyncIterable<Uint8Array> & { cancel: () => Promise<void> };
  try {
    return (await readBounded(reader, bound)).toString('utf8');
  } catch (err) {
    await res.body.cancel().catch(() => undefined);
    throw err;
  }
}

/**
 * Refuses `text` when its JSON nests arrays and objects deeper than `maxDepth`, naming `what` and
 * the line: a scan without recursion, before JSON.parse (which would end in "Maximum call stack").
 */
export function checkJsonDepth(text: string, what: string, maxDepth: number): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) {
        const line = text.slice(0, i).split('\n').length;
        throw new RefusedError(
          'input_too_deep',
          `${what} nests deeper than ${maxDepth} levels (line ${line}); mkt does not read it.`,
        );
      }
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
}

/** JSON.parse of `text` after {@link checkJsonDepth} (default 64 levels); a syntax error is thrown as JSON.parse's. */
export function parseJsonBounded(text: string, what: string, maxDepth = 64): unknown {
  checkJsonDepth(text, what, maxDepth);
  return JSON.parse(text);
}
