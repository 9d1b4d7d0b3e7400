import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { flags } from '../../flags.js';
import { createKey } from '../../keys/keys.js';

export default class KeysCreate extends BaseCommand<typeof KeysCreate> {
  static summary = 'Create an API key; it is shown only once.';
  static description =
    'On a terminal the key is shown with its id; piped, stdout is the key alone, so it can go straight to `mkt login --with-api-key` or a secret manager.';
  static examples = [
    '<%= config.bin %> keys create --mode test',
    '<%= config.bin %> keys create --mode test --app app_123 | <%= config.bin %> login --with-api-key --profile ci',
    '<%= config.bin %> keys create --mode live --json',
  ];
  static enableJsonFlag = true;
  static flags = {
    app: flags.app(),
    mode: Flags.string({
      options: ['test', 'live'],
      default: 'test',
      description: 'test keys reach only the sandbox and simulator; live keys act on real users',
    }),
  };

  async run() {
    const deps = await this.deps();
    const mode = this.flags.mode as 'test' | 'live';
    if (mode === 'live') {
      deps.out.warn(
        'Creating a LIVE key: it acts on real users and real subscriptions. Keep it out of code and logs.',
      );
    }
    const key = await createKey(deps, { app: this.flags.app, mode });
    if (!deps.json) {
      if (deps.out.interactive) {
        deps.out.fields([
          ['id', key.id],
          ['mode', key.mode],
          ['key', key.key],
          ['created', key.created_at],
        ]);
      } else {
        deps.out.data(key.key);
        deps.out.success(`Created ${key.mode} key ${key.id} (revoke it with: mkt keys revoke ${key.id}).`);
      }
    }
    deps.out.warn(
      `This ${mode} key is shown only this once; store it now (for example: mkt login --with-api-key).`,
    );
    return key;
  }
}
