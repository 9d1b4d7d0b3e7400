import { BaseCommand } from '../../base-command.js';
import { getApp } from '../../apps/apps.js';
import { showApp } from '../../apps/render.js';
import { appArg, appFromArgOrFlag, flags } from '../../flags.js';

export default class AppsGet extends BaseCommand<typeof AppsGet> {
  static summary = 'Show an application.';
  static examples = ['<%= config.bin %> apps get app_123', '<%= config.bin %> apps get --json'];
  static enableJsonFlag = true;
  static args = appArg;
  static flags = { app: flags.app() };

  async run() {
    const deps = await this.deps();
    const app = await getApp(deps, { app: appFromArgOrFlag(this.args.app, this.flags.app) });
    if (!deps.json) showApp(deps, app);
    return app;
  }
}
