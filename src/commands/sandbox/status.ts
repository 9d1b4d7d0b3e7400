import { BaseCommand } from '../../base-command.js';
import { flags } from '../../flags.js';
import { CheckFailedError } from '../../errors.js';
import { sandboxFolder } from '../../platform/paths.js';

export default class SandboxStatus extends BaseCommand<typeof SandboxStatus> {
  static summary = 'Say whether a sandbox is running on a data folder (exit 0) or not (exit 3).';
  static description =
    'Reads the running file the sandbox keeps in its data folder (running.json, 0600), checks that its process exists and that its address answers. A file left by a sandbox that died is removed.';
  static examples = [
    '<%= config.bin %> sandbox status --data-dir .sandbox',
    'if <%= config.bin %> sandbox status --json; then echo up; fi',
  ];
  static enableJsonFlag = true;
  static flags = {
    'data-dir': flags.sandboxDataDir(),
  };

  async run() {
    const deps = await this.deps();
    const folder = sandboxFolder(deps.env, this.flags['data-dir']);
    const { findRunning } = await import('../../sandbox-run/running.js');
    const info = await findRunning(folder);
    if (!info) {
      throw new CheckFailedError('sandbox_not_running', `No sandbox is running on ${folder}.`, {
        document: { running: false, data_dir: folder },
        hints: [`mkt sandbox start --detach --data-dir ${folder}`],
      });
    }
    const status = {
      running: true,
      pid: info.pid,
      site_url: info.site_url,
      data_dir: folder,
      started_at: info.started_at,
    };
    if (!deps.json)
      deps.out.fields([
        ['Running', `yes (process ${info.pid}, since ${info.started_at})`],
        ['Site URL', info.site_url],
        ['Data dir', folder],
      ]);
    return status;
  }
}
