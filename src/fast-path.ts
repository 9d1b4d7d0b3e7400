import { parseArgs, type ParseArgsConfig } from 'node:util';
import { createDeps, type Deps } from './deps.js';
import { showEntitlements, showWhoami } from './identity/show.js';
import { reportError } from './output/report.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** The global flags every command has (src/base-command.ts), plus --json. */
const GLOBAL: Options = {
  json: { type: 'boolean' },
  profile: { type: 'string' },
  'site-url': { type: 'string' },
  verbose: { type: 'boolean' },
};

/**
 * Commands that scripts call in loops (`mkt entitlements --json`), run without loading oclif, whose
 * import alone costs about three bare Node starts. Their oclif classes stay the definition (help,
 * manifest); a test checks that both paths accept the same flags and print the same output.
 */
export const FAST_COMMANDS: Record<
  string,
  { options: Options; run(deps: Deps, values: Record<string, unknown>): Promise<number> }
> = {
  whoami: { options: {}, run: (deps) => showWhoami(deps) },
  entitlements: {
    options: { user: { type: 'string' }, feature: { type: 'string' } },
    run: (deps, v) =>
      showEntitlements(deps, {
        user: v.user as string | undefined,
        feature: v.feature as string | undefined,
      }),
  },
};

/**
 * Runs argv on the fast path when it can; answers false when oclif must handle it (help, an
 * unknown or malformed flag: oclif gives the full usage error).
 */
export async function runFast(argv: string[]): Promise<boolean> {
  const [name, ...rest] = argv;
  const command = name === undefined ? undefined : FAST_COMMANDS[name];
  if (!command || process.env.MKT_FAST_PATH === '0') return false;
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: { ...GLOBAL, ...command.options },
      strict: true,
      allowPositionals: false,
    }));
  } catch {
    return false;
  }
  const json = values.json === true;
  try {
    const deps = await createDeps({
      env: process.env,
      stdin: process.stdin,
      stdout: process.stdout,
      stderr: process.stderr,
      profile: values.profile as string | undefined,
      siteUrl: values['site-url'] as string | undefined,
      verbose: values.verbose === true,
      json,
    });
    process.exitCode = await command.run(deps, values);
  } catch (err) {
    process.exitCode = reportError(err, {
      json,
      stdout: process.stdout,
      stderr: process.stderr,
      env: process.env,
    }).exitCode;
  }
  return true;
}
