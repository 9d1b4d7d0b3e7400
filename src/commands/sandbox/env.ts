import { Flags } from '@oclif/core';
import { join } from 'node:path';
import { BaseCommand } from '../../base-command.js';
import { MktError } from '../../errors.js';
import { dataDir } from '../../platform/paths.js';
import { envHelp } from '../../sandbox-run/env.js';

export default class SandboxEnv extends BaseCommand<typeof SandboxEnv> {
  static summary = "Print a running sandbox's environment as shell export lines.";
  static description = `For runners that start the sandbox in one step and test in another: \`eval "$(mkt sandbox env)"\`. Values are quoted for sh, bash and zsh; with --json, one object. It prints secrets: keep its output out of logs.

Variables:
${envHelp()}`;
  static examples = [
    'eval "$(<%= config.bin %> sandbox env --data-dir .sandbox)"',
    '<%= config.bin %> sandbox env --json',
  ];
  static enableJsonFlag = true;
  static flags = {
    'data-dir': Flags.string({
      description: "the sandbox's data folder (default: the platform data folder)/sandbox",
    }),
  };

  async run() {
    const deps = await this.deps();
    const folder = this.flags['data-dir'] ?? join(dataDir(deps.env), 'sandbox');
    const { findRunning } = await import('../../sandbox-run/running.js');
    const { exportLines, sandboxEnv } = await import('../../sandbox-run/env.js');
    const info = await findRunning(folder);
    if (!info) {
      throw new MktError('sandbox_not_running', `No sandbox is running on ${folder}.`, 1, {
        hints: [`mkt sandbox start --detach --data-dir ${folder}`],
      });
    }
    const env = sandboxEnv(info);
    if (!deps.json) deps.out.data(exportLines(env).trimEnd());
    return env;
  }
}
