import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { flags } from '../../flags.js';
import { sandboxFolder } from '../../platform/paths.js';

export default class SandboxExport extends BaseCommand<typeof SandboxExport> {
  static summary = "Write a sandbox's state as a fixtures file, to replay with --seed.";
  static description =
    'The developer, apps (with their secrets), plans, keys, test users (plan, status, payment behaviour, trial left, usage), live grants and business time of a sandbox (running: from a consistent snapshot of its database; or stopped), as JSON that `mkt sandbox start --seed` and `mkt sandbox exec --seed` read back with the same ids. History (deliveries, charges, spent tokens) is not part of it. The file holds secrets: it is written 0600.';
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
    const { exportState } = await import('../../sandbox-run/export-state.js');
    const fixtures = await exportState(deps, { folder, output: this.flags.output });
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
