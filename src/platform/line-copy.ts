// The door for OUTPUT copied from another program to a terminal or pipe (`mkt dev`'s processes, a
// stream's lines): it guarantees that memory is bounded by the reader, not the writer (the source
// is not read while the destination is behind: its writes wait in the pipe, as `logs tail` does with
// the server's), and that a line is bounded in length (a line with no newline is passed on in
// pieces of `maxLineChars`, never kept whole). What a line holds is made safe for a terminal where
// it is shown (src/output/safe-text.ts: safeText), which is the door for text shown to a person.
import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/** The longest line passed on whole by default (characters); a longer one comes in pieces. */
export const MAX_LINE_CHARS = 16 * 1024;

const draining = new WeakMap<Writable, Promise<void>>();

/**
 * Undefined while `stream` takes more; while its reader is behind (write() said false), a promise
 * that resolves once it drained (or closed): a reader of a source waits for it before reading on.
 */
export function drained(stream: Writable): Promise<void> | undefined {
  if (!stream.writableNeedDrain) return undefined;
  let wait = draining.get(stream);
  if (!wait) {
    wait = new Promise<void>((resolve) => {
      const done = () => {
        stream.off('drain', done);
        stream.off('close', done);
        draining.delete(stream);
        resolve();
      };
      stream.on('drain', done);
      stream.on('close', done);
    });
    draining.set(stream, wait);
  }
  return wait;
}

/**
 * Reads `source` line by line until it ends: `line` gets each line (without its newline; a longer
 * one than `maxLineChars` in pieces, `cut` true on all but the last), and reading pauses whenever
 * `behind()` answers a promise, until it resolves. Resolves when the source ended or failed.
 */
export function copyLines(
  source: Readable,
  options: {
    line: (text: string, cut: boolean) => void;
    behind: () => Promise<void> | undefined;
    maxLineChars?: number;
  },
): Promise<void> {
  const max = options.maxLineChars ?? MAX_LINE_CHARS;
  const decoder = new StringDecoder('utf8');
  let pending = '';
  const take = (text: string) => {
    pending += text;
    let nl = pending.indexOf('\n');
    while (nl >= 0 || pending.length >= max) {
      if (nl >= 0 && nl <= max) {
        options.line(pending.slice(0, nl).replace(/\r$/, ''), false);
        pending = pending.slice(nl + 1);
      } else {
        options.line(pending.slice(0, max), true);
        pending = pending.slice(max);
      }
      nl = pending.indexOf('\n');
    }
  };
  return new Promise((resolve) => {
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const rest = pending + decoder.end();
      pending = '';
      if (rest) take(`${rest}\n`);
      resolve();
    };
    source.on('data', (chunk: Buffer | string) => {
      take(typeof chunk === 'string' ? chunk : decoder.write(chunk));
      const wait = options.behind();
      if (!wait) return;
      source.pause();
      void wait.then(() => {
        if (!ended) source.resume();
      });
    });
    source.once('end', end);
    source.once('close', end);
    source.once('error', end);
  });
}

/** Copies `source` to `dest` line by line with {@link copyLines}, each line made by `format`; bounded by `dest`'s reader. */
export function copyLinesTo(
  source: Readable,
  dest: Writable,
  format: (line: string, cut: boolean) => string,
  maxLineChars?: number,
): Promise<void> {
  return copyLines(source, {
    line: (text, cut) => dest.write(format(text, cut)),
    behind: () => drained(dest),
    maxLineChars,
  });
}
