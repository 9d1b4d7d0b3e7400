import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { rotateSecret, SECRET_NAMES } from '../../apps/apps.js';
import { appArg, appFromArgOrFlag, flags } from '../../flags.js';

export default class AppsRotateSecret extends BaseCommand<typeof AppsRotateSecret> {
  static summary = "Replace an app's client secret or webhook signing secret.";
  static description =
    "The old secret stops working at once. The new one is printed once on stdout and kept in the credential store (for `mkt login` and `mkt webhooks listen`). Run in a project `mkt init` wrote, for its app, it also replaces the secret in the project's .env. Asks for confirmation on a terminal; elsewhere --yes is required.";
  static examples = [
    '<%= config.bin %> apps rotate-secret app_123 --kind client',
    '<%= config.bin %> apps rotate-secret --kind webhook --yes > webhook-secret.txt',
  ];
  static enableJsonFlag = true;
  static args = appArg;
  static flags = {
    app: flags.app(),
    kind: Flags.string({
      required: true,
      options: ['client', 'webhook'],
      description: 'which secret to replace',
    }),
    yes: flags.yes(),
  };

  async run() {
    const deps = await this.deps();
    const kind = this.flags.kind as 'client' | 'webhook';
    const rotation = await rotateSecret(deps, {
      app: appFromArgOrFlag(this.args.app, this.flags.app),
      kind,
      yes: this.flags.yes,
    });
    if (!deps.json) {
      deps.out.data(rotation.secret);
      deps.out.success(`Rotated the ${SECRET_NAMES[kind]} of ${rotation.appId}.`);
    }
    if (kind === 'client') deps.out.warn('The new client secret is shown only this once.');
    const { updateProjectEnv } = await import('../../init/env-update.js');
    const env = await updateProjectEnv(deps, {
      appId: rotation.appId,
      name: kind === 'client' ? 'MKT_CLIENT_SECRET' : 'MKT_WEBHOOK_SECRET',
      value: rotation.secret,
    });
    if (env && 'updated' in env)
      deps.out.info(`Updated it in ${env.updated}; restart the app (mkt dev) to read it.`);
    if (env && 'manual' in env) deps.out.warn(env.manual);
    if (rotation.stored) deps.out.info(`It is stored in the credential store for profile "${deps.profile}".`);
    else deps.out.warn(`It could not be stored (${rotation.storeError}); copy it now.`);
    return rotation.response;
  }
}
