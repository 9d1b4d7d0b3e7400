import { BaseCommand } from '../../base-command.js';
import { arg, flags } from '../../flags.js';
import { revokeKey } from '../../keys/keys.js';

export default class KeysRevoke extends BaseCommand<typeof KeysRevoke> {
  static summary = 'Revoke an API key; requests made with it fail from then on.';
  static description = 'Asks for confirmation on a terminal; elsewhere --yes is required.';
  static examples = [
    '<%= config.bin %> keys revoke key_123',
    '<%= config.bin %> keys revoke key_123 --app app_123 --yes',
  ];
  static enableJsonFlag = true;
  static args = { key: arg({ required: true, description: 'key id (key_…) from `mkt keys list`' }) };
  static flags = { app: flags.app(), yes: flags.yes() };

  async run() {
    const deps = await this.deps();
    const result = await revokeKey(deps, { app: this.flags.app, id: this.args.key, yes: this.flags.yes });
    if (!deps.json) deps.out.success(`Revoked API key ${result.id}.`);
    return result;
  }
}
