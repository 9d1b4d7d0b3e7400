// --jq EXPR: the JSON a command prints, filtered by jq itself (jq 1.8 compiled to WebAssembly, the
// jq-wasm package), loaded only when the flag is given. Output as `gh --jq` gives it: each value on
// its own line, strings raw, null as an empty line, arrays and objects as compact JSON (indented on
// a terminal). Why jq-wasm: docs/DECISIONS.md (--jq).
import { MktError, UsageError } from '../errors.js';
import { safeText } from './safe-text.js';

/**
 * A compiled --jq expression: `apply` turns one JSON value into the text to print ('' for none) and,
 * when jq failed on it, the error (the text then holds what jq printed before it failed).
 */
export interface JqFilter {
  apply(value: unknown): Promise<{ text: string; error?: MktError }>;
}

/**
 * Loads jq (src/platform/expression.ts: Ctrl-C and SIGTERM end an endless expression; bounded memory) and
 * checks `expression` before the command does anything: a bad one is a usage error naming the line
 * and column jq gives. `terminal`: stdout is a terminal (indent, escape controls).
 */
export async function loadJqFilter(
  expression: string,
  options: { terminal: boolean; env?: Record<string, string | undefined> },
): Promise<JqFilter> {
  const { loadJq, expressionMemoryMb } = await import('../platform/expression.js');
  const jq = await loadJq({
    what: 'The --jq expression',
    memoryMb: expressionMemoryMb(options.env ?? process.env),
  });
  const run = (input: string) => jq.run(input, expression);
  // jq exits 3 on a compile error only (a run on `null` that fails at run time exits 5).
  const check = run('null');
  if (check.exitCode === 3) {
    throw new UsageError(`The --jq expression is not valid: ${jqMessage(check.stderr)}.`, {
      code: 'invalid_jq',
    });
  }
  return {
    async apply(value) {
      const result = run(JSON.stringify(value) ?? 'null');
      const text = result.stdout
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => format(JSON.parse(line), options.terminal))
        .join('');
      if (result.exitCode === 0) return { text };
      return {
        text,
        error: new MktError('jq_failed', `The --jq expression failed: ${jqMessage(result.stderr)}.`),
      };
    },
  };
}

/** One output value as gh prints it, with its newline. */
function format(value: unknown, terminal: boolean): string {
  if (value === null) return '\n';
  if (typeof value === 'string') return `${terminal ? safeText(value) : value}\n`;
  if (typeof value !== 'object') return `${String(value)}\n`;
  // JSON.stringify leaves C1 controls and bidi overrides (U+009B, U+202E) as they are: escaped on a terminal.
  return terminal ? `${safeText(JSON.stringify(value, null, 2))}\n` : `${JSON.stringify(value)}\n`;
}

/** jq's first error line without its "jq: error" prefix and the "<top-level>" name of the program. */
function jqMessage(stderr: string): string {
  const first = stderr.split('\n')[0] ?? '';
  return first
    .replace(/^jq: error(?: \(at [^)]*\))?: /, '')
    .replace(' at <top-level>, ', ' at ')
    .replace(/[:.]$/, '');
}
