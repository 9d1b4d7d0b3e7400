import type { Deps } from '../deps.js';
import { siteKey } from '../credentials/accounts.js';
import { InterruptedError, UsageError } from '../errors.js';
import { safeText } from '../output/safe-text.js';
import { type Account, accountLabel, findAccount, profileAccounts } from './accounts.js';
import { noSuchAccount } from './status.js';

/**
 * The account `mkt auth switch` moves to among the profile's accounts of the site in use: the one
 * `--user` names; else the other one when there are two; else the person's choice on a terminal;
 * without a terminal, a usage error naming `--user` and the accounts.
 */
export async function chooseAccount(deps: Deps, user: string | undefined): Promise<Account> {
  const site = siteKey(deps.siteUrl);
  const list = (await profileAccounts(deps, deps.profile)).filter((a) => a.site_url === site);
  if (user) return findAccount(list, user) ?? Promise.reject(noSuchAccount(deps, user, list));
  const others = list.filter((a) => !a.active);
  if (!others.length) {
    throw new UsageError(
      list.length
        ? `Profile "${deps.profile}" has one account on ${site} (${accountLabel(list[0]!)}); sign in as another with \`mkt login\` and both are kept.`
        : `Profile "${deps.profile}" has no account on ${site}.`,
      { code: 'nothing_to_switch', hints: ['mkt login', 'mkt auth list'] },
    );
  }
  if (others.length === 1) return others[0]!;
  if (!(deps.out.interactive && deps.stdin.isTTY)) {
    throw new UsageError(
      `Profile "${deps.profile}" has ${list.length} accounts on ${site}: pass --user with one of ${list.map((a) => a.user?.email ?? a.id).join(', ')}.`,
      {
        code: 'account_required',
        hints: [`mkt auth switch --user ${others[0]!.user?.email ?? others[0]!.id}`],
      },
    );
  }
  const { select } = await import('@inquirer/prompts');
  try {
    return await select(
      {
        message: `Account for profile "${deps.profile}" on ${site}`,
        // Names and e-mails come from the server: plain text only on the terminal.
        choices: list.map((a) => ({
          name: `${safeText(accountLabel(a))}${a.active ? '  (active)' : ''}`,
          value: a,
        })),
        default: others[0],
      },
      { output: deps.out.stderr },
    );
  } catch (err) {
    if ((err as Error).name === 'ExitPromptError') throw new InterruptedError();
    throw err;
  }
}
