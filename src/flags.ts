import { Args, Flags } from '@oclif/core';
import { UsageError } from './errors.js';

/** Shared flag factories, so every command spells the same thing the same way. */
export const flags = {
  /** The app a command acts on; defaults to the API key's own app, else the profile's app (`mkt apps use`). */
  app: () =>
    Flags.string({
      description: "app id (app_…); default: the API key's own app, else the profile's app (`mkt apps use`)",
    }),
  /** The simulator's test user a command acts on. */
  testUser: () => Flags.string({ description: 'test user id (usr_…)', required: true }),
  /** A sandbox's data folder (`sandbox start`, `env`, `status`, `stop`, `export`); see sandboxFolder. */
  sandboxDataDir: (description = "the sandbox's data folder (default: the platform data folder)/sandbox") =>
    Flags.string({ description }),
  /** Skip the confirmation of a destructive action; required when there is no terminal. */
  yes: () =>
    Flags.boolean({ char: 'y', description: 'do not ask for confirmation (required without a terminal)' }),
};

/**
 * A positional argument, never taken from stdin: oclif's parser reads a piped stdin for an argument
 * not given, so `mkt apps get --app "$a"` in a `while read a` loop swallowed the loop's input, and
 * each such run waited for stdin to close. A command that reads stdin says so and reads it itself.
 */
export const arg = ((options: Parameters<typeof Args.string>[0] = {}) =>
  Args.string({ ...options, ignoreStdin: true })) as typeof Args.string;

/** The app an `apps` command acts on, as users type it: `mkt apps get APP` (or `--app APP`). */
export const appArg = {
  app: arg({
    description: "app id (app_…); default: --app, the API key's own app, else the profile's app",
  }),
};

/** The app named by the positional argument or by --app (the same app, if both are given). */
export function appFromArgOrFlag(arg: string | undefined, flag: string | undefined): string | undefined {
  if (arg !== undefined && flag !== undefined && arg !== flag)
    throw new UsageError(`Two apps given: ${arg} and --app ${flag}; name one.`);
  return arg ?? flag;
}
