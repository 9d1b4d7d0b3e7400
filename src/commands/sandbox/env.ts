import { BaseCommand } from '../../base-command.js';
import { flags } from '../../flags.js';
import { MktError } from '../../errors.js';
import { sandboxFolder } from '../../platform/paths.js';
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
    'data-dir': flags.sandboxDataDir(),
  };

  async run() {
    const deps = await this.deps();
    const folder = sandboxFolder(deps.env, this.flags['data-dir']);
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
