import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { checkAppInput, updateApp } from '../../apps/apps.js';
import { showApp } from '../../apps/render.js';
import { appArg, appFromArgOrFlag, flags } from '../../flags.js';

export default class AppsUpdate extends BaseCommand<typeof AppsUpdate> {
  static summary = 'Change an application.';
  static description =
    'Only the fields given change. --redirect-uri replaces the whole list; --webhook-url "" and --embed-url "" clear them.';
  static examples = [
    '<%= config.bin %> apps update app_123 --name "Acme CRM 2"',
    '<%= config.bin %> apps update --redirect-uri https://acme.example/cb --redirect-uri http://127.0.0.1/callback',
    '<%= config.bin %> apps update --webhook-url ""',
  ];
  static enableJsonFlag = true;
  static args = appArg;
  static flags = {
    app: flags.app(),
    name: Flags.string({ description: 'new display name' }),
    'redirect-uri': Flags.string({
      multiple: true,
      description: 'OAuth redirect URI (repeatable; replaces the list): https, or http on a loopback host',
    }),
    'webhook-url': Flags.string({ description: 'webhook delivery URL ("" to clear)' }),
    'embed-url': Flags.string({ description: 'embedded page URL ("" to clear)' }),
  };

  async run() {
    const deps = await this.deps();
    const app = await updateApp(deps, {
      app: appFromArgOrFlag(this.args.app, this.flags.app),
      ...checkAppInput(this.flags),
    });
    if (!deps.json) {
      deps.out.success(`Updated app ${app.name} (${app.id}).`);
      showApp(deps, app);
    }
    return app;
  }
}
