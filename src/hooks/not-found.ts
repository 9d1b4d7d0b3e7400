import type { Command, Hook } from '@oclif/core';

/**
 * What oclif could not run, said as it is (docs/CLI.md, Arguments): words after a command that takes
 * none are an unexpected argument (exit 2); a word that names no command of a real topic is that
 * topic's unknown command, with the topic's commands; anything else is not a mkt command (exit 127,
 * as a shell answers). Suggestions name only commands that exist, with the user's words placed where
 * that command takes them. Never runs a guess.
 */
const hook: Hook.CommandNotFound = async function (opts) {
  const { MktError, UsageError } = await import('../errors.js');
  const { reportError } = await import('../output/report.js');
  const { closests, shellWord } = await import('../output/suggest.js');
  // oclif folds the words after an unknown command (or after a command without arguments) into its id.
  const parts = opts.id.split(':');
  const flagWords = opts.argv ?? [];
  const commands = opts.config.commands.filter((c) => !c.hidden);
  const find = (id: string) => commands.find((c) => c.id === id || c.aliases.includes(id));
  const spaced = (id: string) => id.replace(/:/g, ' ');
  const isTopic = (id: string) => commands.some((c) => c.id.startsWith(`${id}:`));

  /** The line that runs `command` with the user's words, or undefined when it takes fewer of them. */
  const line = (command: Command.Loadable, words: string[]) =>
    words.length <= Object.keys(command.args ?? {}).length
      ? ['mkt', spaced(command.id), ...[...words, ...flagWords].map(shellWord)].join(' ')
      : undefined;

  let error;
  const known = parts.map((_, i) => parts.slice(0, parts.length - i).join(':')).find((id) => find(id));
  if (known) {
    const extra = parts.slice(known.split(':').length);
    // An id where the command takes it by a flag (`mkt entitlements usr_…`): the line with the flag.
    const flag = extra.length === 1 ? flagForId(extra[0]!, find(known)!) : undefined;
    const line = ['mkt', spaced(known), ...(flag ? [`--${flag}`, extra[0]!] : []), ...flagWords].map(
      shellWord,
    );
    error = new UsageError(
      `Unexpected argument "${extra.join(' ')}": mkt ${spaced(known)} takes no arguments${
        flag ? `; name the ${flag} with --${flag} ${extra[0]}` : ''
      }.`,
      { code: 'unexpected_argument', hints: [flag ? line.join(' ') : `mkt ${spaced(known)} --help`] },
    );
  } else {
    // The longest leading part that is a topic ("" for the root), and the word after it.
    let depth = parts.length - 1;
    while (depth > 0 && !isTopic(parts.slice(0, depth).join(':'))) depth--;
    const topic = parts.slice(0, depth).join(':');
    let typed = parts.slice(0, depth + 1).join(':');
    let words = parts.slice(depth + 1);
    // The topic's commands and topics, by their next word.
    const next = [
      ...new Set(
        commands
          .map((c) => c.id.split(':'))
          .filter((ids) => ids.length > depth && ids.slice(0, depth).join(':') === topic)
          .map((ids) => ids[depth]!),
      ),
    ].sort();
    // Of equally close words, one that with the next typed word names a command (`mkt aps list`).
    const guesses = closests(parts[depth]!, next).map((w) => [...parts.slice(0, depth), w].join(':'));
    let guess = guesses.find((g) => words[0] && find(`${g}:${words[0]}`)) ?? guesses[0];
    if (guess && !find(guess) && words[0] && find(`${guess}:${words[0]}`)) {
      guess = `${guess}:${words[0]}`;
      typed = `${typed}:${words[0]}`;
      words = words.slice(1);
    }
    const command = guess === undefined ? undefined : find(guess);
    const run = command ? line(command, words) : undefined;
    const where = topic ? `mkt ${spaced(topic)}` : 'mkt';
    error = new MktError(
      'unknown_command',
      `"${spaced(typed)}" is not a mkt command.${
        guess
          ? ` Did you mean "${spaced(guess)}"?`
          : topic
            ? ` The ${spaced(topic)} commands: ${next.join(', ')}.`
            : ''
      }`,
      127,
      { hints: run ? [run, `${where} --help`] : [`${guess ? `mkt ${spaced(guess)}` : where} --help`] },
    );
  }
  reportError(error, {
    json: flagWords.includes('--json'),
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
  });
  this.exit(error.exitCode);
};

/** The flag of `command` that takes an id like `word` (`usr_…` → user, `app_…` → app), if it has one. */
function flagForId(word: string, command: Command.Loadable): string | undefined {
  const byPrefix: Record<string, string> = { usr: 'user', app: 'app', key: 'key', pay: 'payment' };
  const name = byPrefix[/^([a-z]+)_\w/.exec(word)?.[1] ?? ''];
  return name && command.flags?.[name] ? name : undefined;
}

export default hook;
