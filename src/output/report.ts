import type { Writable } from 'node:stream';
import { toMktError, type MktError } from '../errors.js';
import { DeclinedError } from '../platform/prompts.js';

/**
 * Prints an error the one way mkt prints errors: `{"error": {code, message, hints}}` on stdout with
 * --json, else "Error: …" and "Try: …" lines on stderr. Returns the error as an MktError.
 */
export function reportError(
  err: unknown,
  io: {
    json: boolean;
    stdout: Writable;
    stderr: Writable & { isTTY?: boolean };
    env: Record<string, string | undefined>;
  },
): MktError {
  const error = toMktError(err);
  if (error.code === 'internal' && io.env.DEBUG) io.stderr.write(`${(err as Error).stack}\n`);
  if (io.json) {
    io.stdout.write(
      `${JSON.stringify({ error: { code: error.code, message: error.message, hints: error.hints } }, null, 2)}\n`,
    );
    return error;
  }
  if (error instanceof DeclinedError) {
    io.stderr.write(`${error.message}\n`);
    return error;
  }
  const color = io.stderr.isTTY && io.env.NO_COLOR === undefined && !io.env.CI;
  io.stderr.write(`${color ? '\u001b[31mError:\u001b[0m' : 'Error:'} ${error.message}\n`);
  for (const hint of error.hints) io.stderr.write(`  Try: ${hint}\n`);
  return error;
}
