// The door for VALUES mkt writes into files other programs parse: a `.env` file (node --env-file,
// dotenv), `export NAME=value` lines for a shell (`mkt sandbox env`), JSON. It guarantees: a value
// holding a line break or any other control character (C0, DEL, C1) is refused, naming the field,
// before anything is written, so that no value can add a line (NODE_OPTIONS=--require …) or end a
// quote; names are plain identifiers. JSON needs no more than JSON.stringify, which escapes them.
import { RefusedError } from './refused.js';

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Refuses `value` for `field` (its name in the message: "client_id", "MKT_API_KEY") when it holds a
 * line break or another control character: a RefusedError (exit 1) before anything is written.
 */
export function checkFileValue(field: string, value: string): string {
  const bad = CONTROL.exec(value);
  if (bad)
    throw new RefusedError(
      'unsafe_value',
      `The value of ${field} holds a control character (U+${bad[0].charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}` +
        ` at position ${bad.index}); mkt writes no such value into a file another program reads.`,
      [
        'Check where the value came from (a server answer, a fixtures file): it is not a plain identifier or secret.',
      ],
    );
  return value;
}

function checkName(name: string): string {
  if (!NAME.test(name))
    throw new RefusedError('unsafe_value', `"${name.replace(CONTROL, '?')}" is not a variable name.`);
  return name;
}

/** One `NAME=value` line of a `.env` file (with its newline), every value checked; quoted when it needs it. */
export function envFileLine(name: string, value: string): string {
  checkName(name);
  checkFileValue(name, value);
  // dotenv and node --env-file: a value with a space, #, or a quote is double-quoted; inside double
  // quotes neither expands anything but \n, which a checked value cannot hold.
  const plain = /^[A-Za-z0-9_@%+=:,./-]*$/.test(value);
  return plain ? `${name}=${value}\n` : `${name}="${value.replaceAll('"', '\\"')}"\n`;
}

/** The text of a `.env` file: one {@link envFileLine} per entry, every value checked before any is written. */
export function envFileText(entries: Record<string, string>): string {
  return Object.entries(entries)
    .map(([k, v]) => envFileLine(k, v))
    .join('');
}

/**
 * Writes `entries` as a new `.env` file at `path` (0600; never over an existing file, never through
 * a link: fs-atomic createFile), every value checked first: nothing is written when one is refused.
 */
export async function writeEnvFile(path: string, entries: Record<string, string>): Promise<void> {
  const text = envFileText(entries);
  const { createFile } = await import('./fs-atomic.js');
  await createFile(path, text, { mode: 0o600, code: 'env_file_exists' });
}

/** A POSIX shell word for `value` (checked): single-quoted, a quote inside written as '\''. */
export function shellQuote(field: string, value: string): string {
  checkFileValue(field, value);
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/** `export NAME=value` lines for sh, bash and zsh, every value checked before any line is made. */
export function exportLines(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([k, v]) => `export ${checkName(k)}=${shellQuote(k, v)}\n`)
    .join('');
}
