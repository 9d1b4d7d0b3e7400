import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { flags } from '../../flags.js';
import { sandboxFolder } from '../../platform/paths.js';

export default class SandboxStop extends BaseCommand<typeof SandboxStop> {
  static summary =
    'Stop the sandbox running on a data folder (started with --detach, or in another terminal).';
  static description =
    'Sends it SIGTERM and waits until it has stopped (every acknowledged change is already on disk). Nothing running is not an error: the command is safe in a cleanup step.';
  static examples = ['<%= config.bin %> sandbox stop --data-dir .sandbox'];
  static enableJsonFlag = true;
  static flags = {
    'data-dir': flags.sandboxDataDir(),
    timeout: Flags.integer({ description: 'seconds to wait before giving up', default: 30, min: 1 }),
  };

  async run() {
    const deps = await this.deps();
    const folder = sandboxFolder(deps.env, this.flags['data-dir']);
    const { stopRunning } = await import('../../sandbox-run/stop.js');
    const result = await stopRunning(folder, this.flags.timeout * 1000);
    if (!deps.json) {
      if (result.stopped) deps.out.success(`Stopped the sandbox on ${folder} (process ${result.pid}).`);
      else deps.out.info(`No sandbox was running on ${folder}.`);
    }
    return { data_dir: folder, ...result };
  }
}
