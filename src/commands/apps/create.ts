import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { checkAppInput, createApp } from '../../apps/apps.js';
import { showApp } from '../../apps/render.js';

export default class AppsCreate extends BaseCommand<typeof AppsCreate> {
  static summary = 'Create an application.';
  static description =
    'The client secret is printed once, with the app, and kept in the credential store so `mkt login --client-id` can use it.';
  static examples = [
    '<%= config.bin %> apps create --name "Acme CRM" --redirect-uri http://127.0.0.1/callback',
    '<%= config.bin %> apps create --name "Acme CRM" --redirect-uri https://acme.example/oauth/callback --webhook-url https://acme.example/webhooks --json',
  ];
  static enableJsonFlag = true;
  static flags = {
    name: Flags.string({ required: true, description: 'display name' }),
    'redirect-uri': Flags.string({
      multiple: true,
      description: 'OAuth redirect URI (repeatable): https, or http on 127.0.0.1, [::1] or localhost',
    }),
    'webhook-url': Flags.string({ description: 'where the marketplace sends webhook deliveries' }),
    'embed-url': Flags.string({ description: 'page the marketplace embeds for the app' }),
  };

  async run() {
    const deps = await this.deps();
    const input = checkAppInput(this.flags);
    const { app, stored, storeError } = await createApp(deps, input);
    if (!deps.json) {
      deps.out.success(`Created app ${app.name} (${app.id}).`);
      showApp(deps, app);
    }
    deps.out.warn(
      'The client secret is shown only this once; it cannot be read again (rotate it with `mkt apps rotate-secret --kind client`).',
    );
    if (stored) deps.out.info(`The client secret is stored for \`mkt login --client-id ${app.client_id}\`.`);
    else deps.out.warn(`The client secret could not be stored (${storeError}); copy it now.`);
    deps.out.info(`Make it the default app: mkt apps use ${app.id}`);
    return app;
  }
}
