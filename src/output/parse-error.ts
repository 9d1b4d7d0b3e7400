import { stripVTControlCharacters } from 'node:util';
import { closest, shellWord } from './suggest.js';

/**
 * oclif's parse errors in mkt's words: flags named as typed (`--name`), arguments by their usage
 * name (`EVENT`), and none of oclif's boilerplate ("The following error occurred", the note on
 * repeatable flags, "See more help").
 */
export function parseErrorMessage(message: string, flagNames: string[] = []): string {
  const text = stripVTControlCharacters(message)
    .replace(/\n?See more help with --help\s*$/, '')
    .replace(/\n\nNote: [\s\S]*$/, '');
  const missingArgs = /^Missing \d+ required args?:\n([\s\S]+)$/.exec(text);
  if (missingArgs) {
    return missingArgs[1]!
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => {
        const [, name = line, description] = /^(\S+)\s+(.*)$/.exec(line.trim()) ?? [];
        return `Missing required argument ${name.toUpperCase()}${description ? `: ${description}` : ''}.`;
      })
      .join('\n');
  }
  return text
    .replace(/^The following errors? occurred:\n/, '')
    .split('\n')
    .map((line) =>
      line
        .trim()
        .replace(/^Missing required flag (\S+)$/, 'Missing required flag --$1.')
        .replace(/^Nonexistent flags?: (--?[\w-]+)(?:=.*)?$/, (all, typed: string) => {
          const guess = closest(typed.replace(/^-+/, ''), flagNames);
          return `Unknown flag ${typed}.${guess ? ` Did you mean --${guess}?` : ''}`;
        }),
    )
    .filter(Boolean)
    .join('\n');
}

/**
 * A flag typed for what the command takes as its argument (`mkt plans get --plan X`): the line that
 * gives it as the argument, or undefined when the error is another one. `command` is the command's
 * words (`plans get`), `argv` what followed them.
 */
export function argumentGivenAsFlag(
  message: string,
  command: { id: string; args: string[] },
  argv: string[],
): { message: string; hint: string } | undefined {
  const typed = /Nonexistent flags?: --([\w-]+)/.exec(stripVTControlCharacters(message))?.[1];
  if (!typed || !command.args.includes(typed)) return undefined;
  const at = argv.findIndex((a) => a === `--${typed}` || a.startsWith(`--${typed}=`));
  if (at < 0) return undefined;
  const joined = argv[at]!.includes('=');
  const value = joined ? argv[at]!.slice(argv[at]!.indexOf('=') + 1) : argv[at + 1];
  if (value === undefined || value.startsWith('-')) return undefined;
  const rest = argv.filter((_, i) => i !== at && (joined || i !== at + 1));
  const words = command.id.split(':');
  return {
    message: `Unknown flag --${typed}: mkt ${words.join(' ')} takes the ${typed} as its argument, not as a flag.`,
    hint: ['mkt', ...words, ...[value, ...rest].map(shellWord)].join(' '),
  };
}
