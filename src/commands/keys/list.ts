import { BaseCommand } from '../../base-command.js';
import { flags } from '../../flags.js';
import { listKeys } from '../../keys/keys.js';

export default class KeysList extends BaseCommand<typeof KeysList> {
  static summary = 'List the API keys of an app (never the keys themselves).';
  static description =
    'On a terminal an aligned table; piped, one tab-separated line per key (id, mode, last four characters, created); --json the API objects.';
  static examples = ['<%= config.bin %> keys list --app app_123', '<%= config.bin %> keys list --json'];
  static enableJsonFlag = true;
  static flags = { app: flags.app() };

  async run() {
    const deps = await this.deps();
    const keys = await listKeys(deps, { app: this.flags.app });
    if (!deps.json) {
      deps.out.table(keys, [
        { header: 'id', get: (k) => k.id },
        { header: 'mode', get: (k) => k.mode },
        { header: 'last4', get: (k) => k.last4 },
        { header: 'created', get: (k) => k.created_at },
      ]);
    }
    return keys;
  }
}
