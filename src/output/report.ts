import type { Writable } from 'node:stream';
import { CheckFailedError, ChildExitError, toMktError, type MktError } from '../errors.js';
import { colorFor, palette } from './colour.js';
import { jsonText } from './output.js';
import { safeText } from './safe-text.js';

/** Ends that are the person's own doing: said plainly, without "Error:". */
const PLAIN = new Set(['declined', 'interrupted', 'terminated']);

/**
 * Prints an error the one way mkt prints errors: `{"error": {code, message, hints}}` on stdout with
 * --json (a failed check prints its own document instead), else "Error: …" and "Try: …" lines on
 * stderr. An unexpected exception is told apart as a bug, with its stack under --verbose. Returns
 * the error as an MktError.
 */
export function reportError(
  err: unknown,
  io: {
    json: boolean;
    verbose?: boolean;
    stdout: Writable;
    stderr: Writable & { isTTY?: boolean };
    env: Record<string, string | undefined>;
  },
): MktError {
  const error = toMktError(err);
  // A command mkt ran ended so, and said why itself: only its exit code is left.
  if (error instanceof ChildExitError) return error;
  const bug = error.code === 'internal';
  if (bug && (io.verbose || io.env.DEBUG)) io.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  if (io.json && error instanceof CheckFailedError && error.document !== undefined) {
    io.stdout.write(jsonText(error.document));
    io.stderr.write(`${safeText(error.message)}\n`);
    return error;
  }
  if (io.json) {
    io.stdout.write(
      jsonText({
        error: { code: error.code, message: error.message, hints: error.hints, request_id: error.requestId },
      }),
    );
    return error;
  }
  // A check that said no is an answer, not a failure of mkt: its reason (and what to do), no "Error:".
  if (PLAIN.has(error.code) || error instanceof CheckFailedError) {
    io.stderr.write(`${safeText(error.message)}\n`);
    for (const hint of error.hints) io.stderr.write(`  Try: ${safeText(hint)}\n`);
    return error;
  }
  const label = bug ? 'Internal error (a bug in mkt):' : 'Error:';
  io.stderr.write(`${palette(colorFor(io.stderr, io.env))('red', label)} ${safeText(error.message)}\n`);
  for (const hint of error.hints) io.stderr.write(`  Try: ${safeText(hint)}\n`);
  if (error.requestId) io.stderr.write(`  Request ID: ${error.requestId}\n`);
  if (bug) {
    io.stderr.write(
      io.verbose
        ? '  Please report it with the lines above and the command you ran (secrets are redacted).\n'
        : '  Please report it: run the same command with --verbose and include what it prints.\n',
    );
  }
  return error;
}
