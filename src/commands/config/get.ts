import { describeSiteSource } from '../../deps.js';
import { BaseCommand } from '../../base-command.js';
import { validateSetting } from '../../config/store.js';
import { MktError } from '../../errors.js';
import { arg } from '../../flags.js';

export default class ConfigGet extends BaseCommand<typeof ConfigGet> {
  static summary = 'Print one setting of the profile.';
  static examples = [
    '<%= config.bin %> config get site-url',
    '<%= config.bin %> config get app --profile staging',
  ];
  static enableJsonFlag = true;
  static args = { key: arg({ required: true, description: 'setting name (see `mkt config list`)' }) };

  async run() {
    validateSetting(this.args.key);
    const deps = await this.deps();
    // The site URL always has a value: the one in effect, as `config list` shows it (and from where).
    const siteUrl = this.args.key === 'site-url';
    const value = siteUrl ? deps.siteUrl : await deps.config.get(deps.profile, this.args.key);
    if (value === undefined) {
      throw new MktError('config_unset', `${this.args.key} is not set in profile "${deps.profile}".`, 1, {
        hints: [`mkt config set ${this.args.key} VALUE`],
      });
    }
    if (!deps.json) deps.out.data(value);
    if (!deps.json && siteUrl && deps.siteUrlSource !== 'profile')
      deps.out.info(deps.out.dim(`(from ${describeSiteSource(deps.siteUrlSource, deps.profile)})`));
    return {
      key: this.args.key,
      value,
      profile: deps.profile,
      ...(siteUrl ? { source: deps.siteUrlSource } : {}),
    };
  }
}
