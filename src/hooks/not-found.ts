import type { Hook } from '@oclif/core';

/**
 * A mistyped command: says so, names the closest command ("Did you mean …"), and hints the line to
 * run instead, on a terminal or not (a script's log shows it too). Never runs a guess.
 */
const hook: Hook.CommandNotFound = async function (opts) {
  const { MktError } = await import('../errors.js');
  const { reportError } = await import('../output/report.js');
  const parts = opts.id.split(':');
  const ids = opts.config.commands.filter((c) => !c.hidden).flatMap((c) => [c.id, ...c.aliases]);
  // oclif folds the words after an unknown command into its id: try each leading part of it.
  const best = parts
    .map((_, i) => parts.slice(0, parts.length - i).join(':'))
    .flatMap((typed) => ids.map((id) => ({ typed, id, distance: editDistance(typed, id) })))
    .filter((c) => c.distance <= Math.max(2, Math.floor(c.typed.length / 3)))
    .sort((a, b) => a.distance - b.distance || b.typed.length - a.typed.length)[0];
  const typed = (best?.typed ?? opts.id).replace(/:/g, ' ');
  const suggestion = best?.id.replace(/:/g, ' ');
  const words = [...parts.slice(best?.typed.split(':').length ?? parts.length), ...(opts.argv ?? [])];
  const rest = words.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`));
  const topic = opts.config.findTopic(parts[0] ?? '') ? ` ${parts[0]}` : '';
  // Exit 127, as a shell answers for a command it cannot find.
  const error = new MktError(
    'unknown_command',
    `${typed} is not a mkt command.${suggestion ? ` Did you mean "${suggestion}"?` : ''}`,
    127,
    { hints: [...(suggestion ? [['mkt', suggestion, ...rest].join(' ')] : []), `mkt${topic} --help`] },
  );
  reportError(error, {
    json: opts.argv?.includes('--json') ?? false,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
  });
  this.exit(error.exitCode);
};

/** Levenshtein distance between two command ids. */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

export default hook;
