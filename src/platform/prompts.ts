import type { Deps } from '../deps.js';
import { DeclinedError, InterruptedError, UsageError } from '../errors.js';

/** True when we may ask the person something: stdin and stdout are terminals, not CI, not --json. */
function canPrompt(deps: Pick<Deps, 'out' | 'stdin'>): boolean {
  return deps.out.interactive && Boolean(deps.stdin.isTTY);
}

/**
 * Asks "are you sure?" for a destructive action. With `yes` it proceeds; without a terminal it
 * refuses (exit 2) and names the flag.
 */
export async function confirmAction(
  deps: Pick<Deps, 'out' | 'stdin'>,
  message: string,
  options: { yes?: boolean },
): Promise<void> {
  if (options.yes) return;
  if (!canPrompt(deps)) {
    throw new UsageError(
      `${message.replace(/\?$/, '')}: refusing without confirmation; pass --yes to proceed.`,
      {
        code: 'confirmation_required',
      },
    );
  }
  const { confirm } = await import('@inquirer/prompts');
  let ok: boolean;
  try {
    ok = await confirm({ message, default: false }, { output: deps.out.stderr });
  } catch (err) {
    if ((err as Error).name === 'ExitPromptError') throw new InterruptedError();
    throw err;
  }
  if (!ok) throw new DeclinedError();
}

/** Reads a secret with a masked prompt on a terminal; `hint` names the non-interactive way (env, stdin). */
export async function promptSecret(
  deps: Pick<Deps, 'out' | 'stdin'>,
  message: string,
  hint: string,
): Promise<string> {
  if (!canPrompt(deps))
    throw new UsageError(`${message} is needed and there is no terminal to ask on: ${hint}.`);
  const { password } = await import('@inquirer/prompts');
  try {
    // No "reveal" toggle: a secret never shows on a screen that may be shared or recorded.
    return (await password({ message, mask: '*', toggleMask: false }, { output: deps.out.stderr })).trim();
  } catch (err) {
    if ((err as Error).name === 'ExitPromptError') throw new InterruptedError();
    throw err;
  }
}

/**
 * Asks for each missing answer on a terminal (`ask` returns the questions); without one it refuses
 * in one sentence naming every flag that would have answered (exit 2).
 */
export async function askMissing<T extends Record<string, string | undefined>>(
  deps: Pick<Deps, 'out' | 'stdin'>,
  given: T,
  questions: { [K in keyof T]: { flag: string; message: string; choices?: readonly string[] } },
  usage: string,
): Promise<{ [K in keyof T]: string }> {
  const missing = (Object.keys(questions) as Array<keyof T>).filter((k) => !given[k]);
  if (missing.length > 0 && !canPrompt(deps)) {
    const flags = missing.map((k) => questions[k].flag).join(' and ');
    throw new UsageError(`${usage} needs ${flags} when it cannot ask (no terminal).`, {
      code: 'flags_required',
    });
  }
  const answers = { ...given } as Record<keyof T, string | undefined>;
  const { input, select } = await import('@inquirer/prompts');
  try {
    for (const k of missing) {
      const q = questions[k];
      answers[k] = q.choices
        ? await select(
            { message: q.message, choices: q.choices.map((value) => ({ value })) },
            { output: deps.out.stderr },
          )
        : await input({ message: q.message, required: true }, { output: deps.out.stderr });
    }
  } catch (err) {
    if ((err as Error).name === 'ExitPromptError') throw new InterruptedError();
    throw err;
  }
  return answers as { [K in keyof T]: string };
}
