import { Args } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { validateSetting } from '../../config/store.js';
import { MktError } from '../../errors.js';

export default class ConfigGet extends BaseCommand<typeof ConfigGet> {
  static summary = 'Print one setting of the profile.';
  static examples = [
    '<%= config.bin %> config get site-url',
    '<%= config.bin %> config get app --profile staging',
  ];
  static enableJsonFlag = true;
  static args = { key: Args.string({ required: true, description: 'setting name (see `mkt config list`)' }) };

  async run() {
    validateSetting(this.args.key);
    const deps = await this.deps();
    const value = await deps.config.get(deps.profile, this.args.key);
    if (value === undefined) {
      throw new MktError('config_unset', `${this.args.key} is not set in profile "${deps.profile}".`, 1, {
        hints: [`mkt config set ${this.args.key} VALUE`],
      });
    }
    if (!deps.json) deps.out.data(value);
    return { key: this.args.key, value, profile: deps.profile };
  }
}
