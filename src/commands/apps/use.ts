import { BaseCommand } from '../../base-command.js';
import { useApp } from '../../apps/apps.js';
import { arg } from '../../flags.js';

export default class AppsUse extends BaseCommand<typeof AppsUse> {
  static summary = "Set the profile's default app, used when --app is left out.";
  static description = 'The app is looked up first, so a typo or an app you cannot manage is refused.';
  static examples = [
    '<%= config.bin %> apps use app_123',
    '<%= config.bin %> apps use app_123 --profile staging',
  ];
  static enableJsonFlag = true;
  static args = { app: arg({ required: true, description: 'app id (app_…)' }) };

  async run() {
    const deps = await this.deps();
    const app = await useApp(deps, { id: this.args.app });
    if (!deps.json)
      deps.out.success(`Default app for profile "${deps.profile}" is now ${app.name} (${app.id}).`);
    return { profile: deps.profile, app: app.id, name: app.name };
  }
}
