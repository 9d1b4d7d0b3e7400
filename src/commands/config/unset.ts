import { BaseCommand } from '../../base-command.js';
import { arg } from '../../flags.js';

export default class ConfigUnset extends BaseCommand<typeof ConfigUnset> {
  static summary = 'Remove a setting from the profile.';
  static examples = ['<%= config.bin %> config unset app'];
  static enableJsonFlag = true;
  static args = { key: arg({ required: true, description: 'setting name' }) };

  async run() {
    const deps = await this.deps();
    const removed = await deps.config.unset(deps.profile, this.args.key);
    if (!deps.json) {
      if (removed) deps.out.success(`Removed ${this.args.key} from profile "${deps.profile}".`);
      else deps.out.info(`${this.args.key} was not set in profile "${deps.profile}".`);
    }
    return { key: this.args.key, removed, profile: deps.profile };
  }
}
