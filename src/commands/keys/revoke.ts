import { Args } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { resolveAppId } from '../../apps/resolve.js';
import { flags } from '../../flags.js';
import { checkKeyId, revokeKey } from '../../keys/keys.js';
import { confirmAction } from '../../platform/prompts.js';

export default class KeysRevoke extends BaseCommand<typeof KeysRevoke> {
  static summary = 'Revoke an API key; requests made with it fail from then on.';
  static description = 'Asks for confirmation on a terminal; elsewhere --yes is required.';
  static examples = [
    '<%= config.bin %> keys revoke key_123',
    '<%= config.bin %> keys revoke key_123 --app app_123 --yes',
  ];
  static enableJsonFlag = true;
  static args = { key: Args.string({ required: true, description: 'key id (key_…) from `mkt keys list`' }) };
  static flags = { app: flags.app(), yes: flags.yes() };

  async run() {
    const deps = await this.deps();
    const app = await resolveAppId(deps, this.flags.app);
    const id = checkKeyId(this.args.key);
    await confirmAction(deps, `Revoke API key ${id} of ${app} (anything using it stops working)?`, {
      yes: this.flags.yes,
    });
    await revokeKey(deps, app, id);
    if (!deps.json) deps.out.success(`Revoked API key ${id}.`);
    return { id, revoked: true };
  }
}
