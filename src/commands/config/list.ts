import { BaseCommand } from '../../base-command.js';
import { CONFIG_KEYS } from '../../config/store.js';

export default class ConfigList extends BaseCommand<typeof ConfigList> {
  static summary = 'List the settings of the profile, and where the site URL comes from.';
  static examples = ['<%= config.bin %> config list', '<%= config.bin %> config list --json'];
  static enableJsonFlag = true;

  async run() {
    const deps = await this.deps();
    const settings = await deps.config.profile(deps.profile);
    const rows = Object.entries(CONFIG_KEYS).map(([key, spec]) => {
      const effective = key === 'site-url' ? deps.siteUrl : settings[key];
      const source =
        key === 'site-url' ? deps.siteUrlSource : settings[key] === undefined ? 'unset' : 'profile';
      return { key, value: effective ?? null, source, description: spec.description };
    });
    if (!deps.json) {
      deps.out.info(deps.out.dim(`profile "${deps.profile}" in ${deps.config.file}`));
      deps.out.table(rows, [
        { header: 'key', get: (r) => r.key },
        { header: 'value', get: (r) => r.value },
        { header: 'source', get: (r) => r.source },
      ]);
    }
    return { profile: deps.profile, file: deps.config.file, settings: rows };
  }
}
