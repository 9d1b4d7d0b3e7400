import { BaseCommand } from '../../base-command.js';
import { arg } from '../../flags.js';

export default class ConfigSet extends BaseCommand<typeof ConfigSet> {
  static summary = 'Store a setting in the profile.';
  static description = 'Known keys: site-url, app, client-id. Values are checked before anything is written.';
  static examples = [
    '<%= config.bin %> config set site-url http://127.0.0.1:7878',
    '<%= config.bin %> config set app app_123 --profile staging',
  ];
  static enableJsonFlag = true;
  static args = {
    key: arg({ required: true, description: 'setting name' }),
    value: arg({ required: true, description: 'new value' }),
  };

  async run() {
    const deps = await this.deps();
    await deps.config.set(deps.profile, this.args.key, this.args.value);
    if (!deps.json) deps.out.success(`Set ${this.args.key} in profile "${deps.profile}".`);
    return { key: this.args.key, value: this.args.value, profile: deps.profile };
  }
}
