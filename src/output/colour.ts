// The one colour decision and the one way to colour: chalk, whose detection reads FORCE_COLOR,
// --color/--no-color, whether the stream is a terminal and TERM; on top of it NO_COLOR (when set
// and not empty, https://no-color.org) and CI turn colour off unless FORCE_COLOR asks for it.
import { Chalk, supportsColorStderr } from 'chalk';

type Env = Record<string, string | undefined>;

/** Whether the environment says this is a CI job (`CI` set to anything but "false" or "0"). */
export function isCI(env: Env): boolean {
  return Boolean(env.CI) && env.CI !== 'false' && env.CI !== '0';
}

/** Whether text for `stream` (stderr or stdout) may carry colour. */
export function colorFor(stream: { isTTY?: boolean }, env: Env, argv: string[] = process.argv): boolean {
  if (argv.includes('--no-color') || argv.includes('--no-colors')) return false;
  const forced = env.FORCE_COLOR;
  if (forced !== undefined && forced !== '0' && forced !== 'false') return true;
  if (forced !== undefined || env.NO_COLOR || isCI(env)) return false;
  // chalk's own detection, made for stderr; the stream asked about must be a terminal too.
  return Boolean(stream.isTTY) && env.TERM !== 'dumb' && supportsColorStderr !== false;
}

/** The styles mkt uses. */
export type Style = 'bold' | 'dim' | 'red' | 'green' | 'yellow';

/**
 * Text in a style when colour is on (chalk at level 1: the 16 basic colours are all mkt uses), the
 * text itself when it is off. chalk is made on the first styled text: a run whose output is not a
 * terminal never evaluates it (esbuild.config.js keeps it lazy in the bundle: ~2.5 ms a start).
 */
export function palette(enabled: boolean): (style: Style, text: string) => string {
  if (!enabled) return (_, text) => text;
  let chalk: InstanceType<typeof Chalk> | undefined;
  return (style, text) => (chalk ??= new Chalk({ level: 1 }))[style](text);
}
