import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { ChildExitError, UsageError } from '../../errors.js';
import { envHelp } from '../../sandbox-run/env.js';

export default class SandboxExec extends BaseCommand<typeof SandboxExec> {
  static summary = 'Run a command (your test suite) against a fresh sandbox, then stop it.';
  static description = `Starts a sandbox in a temporary folder on a free port (seeded by default, or from --seed FILE), runs CMD with the variables below in its environment, stops the sandbox, removes the folder and exits with CMD's exit code (128+n when signal n ended it; signals that reach mkt are passed on to CMD). CMD is run directly, not through a shell: write \`sh -c '…'\` for a pipeline. The sandbox prints nothing unless asked (--verbose: its request log on stderr; --log-file).

Secrets reach CMD through its environment, never its arguments; a child of CMD inherits them too.

Environment given to CMD:
${envHelp()}`;
  static examples = [
    '<%= config.bin %> sandbox exec -- npm test',
    '<%= config.bin %> sandbox exec --seed fixtures.json -- pytest -q',
    `<%= config.bin %> sandbox exec -- sh -c 'curl -fsS -H "X-Api-Key: $MKT_API_KEY" "$MKT_SITE_URL/api/v1/whoami"'`,
  ];
  static strict = false;
  static flags = {
    seed: Flags.string({
      description: 'fixtures file (JSON) to seed the sandbox from, checked before anything starts',
    }),
    port: Flags.integer({
      description: 'port on 127.0.0.1 (default: any free port)',
      default: 0,
      min: 0,
      max: 65535,
    }),
    'log-file': Flags.string({ description: "append the sandbox's request log to this file" }),
  };

  async run() {
    // Taking the signal makes Ctrl-C and SIGTERM wait for CMD (which receives them) instead of ending mkt.
    void this.signal;
    const { argv } = await this.parse(SandboxExec);
    // CMD and its arguments exactly as typed after `--` (oclif's parse of a non-strict command moves
    // a word that follows a flag-like one: `sh -c 'echo "$1"' sh x` would lose its order).
    const end = this.argv.indexOf('--');
    const [command, ...args] = end >= 0 ? this.argv.slice(end + 1) : (argv as string[]);
    if (command === undefined) {
      throw new UsageError('Name the command to run after --, as in: mkt sandbox exec -- npm test', {
        code: 'command_required',
        hints: ['mkt sandbox exec -- npm test'],
      });
    }
    const seed =
      this.flags.seed === undefined
        ? undefined
        : await (await import('../../sandbox-run/seed-file.js')).readSeedFile(this.flags.seed);
    const { execInSandbox } = await import('../../sandbox-run/exec.js');
    const code = await execInSandbox({
      command,
      args,
      env: process.env,
      port: this.flags.port,
      seed,
      log: { stderr: this.flags.verbose ? process.stderr : undefined, file: this.flags['log-file'] },
    });
    if (code !== 0) throw new ChildExitError(command, code);
  }
}
