// --jq EXPR: the JSON a command prints, filtered by jq itself (jq 1.8 compiled to WebAssembly, the
// jq-wasm package), loaded only when the flag is given. Output as `gh --jq` gives it: each value on
// its own line, strings raw, null as an empty line, arrays and objects as compact JSON (indented on
// a terminal). Why jq-wasm: docs/DECISIONS.md (--jq).
import { MktError, UsageError } from '../errors.js';
import { safeText } from './safe-text.js';
import { requireCommonJs } from '../platform/commonjs.js';

/**
 * A compiled --jq expression: `apply` turns one JSON value into the text to print ('' for none) and,
 * when jq failed on it, the error (the text then holds what jq printed before it failed).
 */
export interface JqFilter {
  apply(value: unknown): { text: string; error?: MktError };
}

interface JqHandle {
  raw(input: string, query: string, flags?: string[]): { stdout: string; stderr: string; exitCode: number };
}

/**
 * Loads jq and checks `expression` before the command does anything: a bad one is a usage error
 * naming the line and column jq gives. `terminal`: stdout is a terminal (indent, escape controls).
 */
export async function loadJqFilter(expression: string, options: { terminal: boolean }): Promise<JqFilter> {
  const { loadJq } = requireCommonJs<{ loadJq(): Promise<JqHandle> }>('jq-wasm');
  // jq's code as V8 first compiles it (Liftoff), never recompiled in the background: a --jq run is a
  // few milliseconds, and the recompiling (TurboFan, on every core) held up the very request the
  // command was waiting on (BENCHMARKS.md, --jq). Read when the module is compiled, just below.
  process.getBuiltinModule('node:v8').setFlagsFromString('--liftoff-only');
  const jq = await loadJq();
  // jq exits 3 on a compile error only (a run on `null` that fails at run time exits 5).
  const check = jq.raw('null', expression, ['-c']);
  if (check.exitCode === 3) {
    throw new UsageError(`The --jq expression is not valid: ${jqMessage(check.stderr)}.`, {
      code: 'invalid_jq',
    });
  }
  return {
    apply(value) {
      const result = jq.raw(JSON.stringify(value) ?? 'null', expression, ['-c']);
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
  return `${JSON.stringify(value, null, terminal ? 2 : undefined)}\n`;
}

/** jq's first error line without its "jq: error" prefix and the "<top-level>" name of the program. */
function jqMessage(stderr: string): string {
  const first = stderr.split('\n')[0] ?? '';
  return first
    .replace(/^jq: error(?: \(at [^)]*\))?: /, '')
    .replace(' at <top-level>, ', ' at ')
    .replace(/[:.]$/, '');
}
