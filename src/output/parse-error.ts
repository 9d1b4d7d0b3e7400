import { stripVTControlCharacters } from 'node:util';
import { closest } from './suggest.js';

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
        .replace(/^Nonexistent flags?: (--?[\w-]+)$/, (all, typed: string) => {
          const guess = closest(typed.replace(/^-+/, ''), flagNames);
          return `Unknown flag ${typed}.${guess ? ` Did you mean --${guess}?` : ''}`;
        }),
    )
    .filter(Boolean)
    .join('\n');
}
