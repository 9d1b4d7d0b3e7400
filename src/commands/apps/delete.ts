import { BaseCommand } from '../../base-command.js';
import { deleteApp } from '../../apps/apps.js';
import { appArg, appFromArgOrFlag, flags } from '../../flags.js';

export default class AppsDelete extends BaseCommand<typeof AppsDelete> {
  static summary = 'Delete an application, with its plans and API keys.';
  static description = 'Asks for confirmation on a terminal; elsewhere --yes is required.';
  static examples = ['<%= config.bin %> apps delete app_123', '<%= config.bin %> apps delete app_123 --yes'];
  static enableJsonFlag = true;
  static args = appArg;
  static flags = { app: flags.app(), yes: flags.yes() };

  async run() {
    const deps = await this.deps();
    const { id, wasDefault } = await deleteApp(deps, {
      app: appFromArgOrFlag(this.args.app, this.flags.app),
      yes: this.flags.yes,
    });
    if (!deps.json) deps.out.success(`Deleted app ${id}.`);
    if (wasDefault)
      deps.out.info(
        `It was the default app of profile "${deps.profile}"; choose another with: mkt apps use APP_ID`,
      );
    return { id, deleted: true };
  }
}
