import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { flags } from '../../flags.js';
import { MktError } from '../../errors.js';
import { sandboxFolder } from '../../platform/paths.js';

export default class SandboxExport extends BaseCommand<typeof SandboxExport> {
  static summary = "Write a sandbox's state as a fixtures file, to replay with --seed.";
  static description =
    'The developer, apps (with their secrets), plans, keys, test users (plan, status, payment behaviour, trial left, usage), live grants and business time of a stopped sandbox, as JSON that `mkt sandbox start --seed` and `mkt sandbox exec --seed` read back with the same ids. History (deliveries, charges, spent tokens) is not part of it. The file holds secrets: it is written 0600.';
  static examples = [
    '<%= config.bin %> sandbox export --data-dir .sandbox --output fixtures.json',
    '<%= config.bin %> sandbox exec --seed fixtures.json -- npm test',
  ];
  static flags = {
    'data-dir': flags.sandboxDataDir(),
    output: Flags.string({ char: 'o', description: 'write here instead of stdout' }),
  };

  async run() {
    const deps = await this.deps();
    const folder = sandboxFolder(deps.env, this.flags['data-dir']);
    const { findRunning } = await import('../../sandbox-run/running.js');
    if (await findRunning(folder)) {
      throw new MktError(
        'sandbox_running',
        `The sandbox on ${folder} is running; stop it first to export its state.`,
        1,
        {
          hints: [`mkt sandbox stop --data-dir ${folder}`],
        },
      );
    }
    const { exportFolder, FolderInUseError } = await import('../../sandbox/start-sandbox.js');
    let fixtures;
    try {
      fixtures = await exportFolder(folder);
    } catch (e) {
      if (e instanceof FolderInUseError) throw new MktError('sandbox_running', e.message, 1);
      if (e instanceof Error && /holds no sandbox state/.test(e.message))
        throw new MktError('no_state', e.message, 1);
      throw e;
    }
    const text = `${JSON.stringify(fixtures, null, 2)}\n`;
    if (this.flags.output === undefined) deps.out.data(text.trimEnd());
    else {
      const { writeFileAtomic } = await import('../../platform/fs-atomic.js');
      await writeFileAtomic(this.flags.output, text, { mode: 0o600 });
      deps.out.success(
        `Wrote ${this.flags.output} (${fixtures.apps.length} app(s)); replay it with: mkt sandbox start --seed ${this.flags.output}`,
      );
    }
    return fixtures;
  }
}
