import { BaseCommand } from '../../base-command.js';
import { listApps } from '../../apps/apps.js';

export default class AppsList extends BaseCommand<typeof AppsList> {
  static summary = 'List your applications.';
  static description =
    'On a terminal an aligned table; piped, one tab-separated line per app (id, name, client id, created); --json the API objects.';
  static examples = ['<%= config.bin %> apps list', '<%= config.bin %> apps list --json'];
  static enableJsonFlag = true;

  async run() {
    const deps = await this.deps();
    const apps = await listApps(deps);
    const current = await deps.config.get(deps.profile, 'app');
    if (!deps.json) {
      deps.out.table(apps, [
        { header: 'id', get: (a) => a.id },
        { header: 'name', get: (a) => a.name },
        { header: 'client id', get: (a) => a.client_id },
        { header: 'created', get: (a) => a.created_at },
      ]);
      if (deps.out.interactive && current && apps.some((a) => a.id === current)) {
        deps.out.info(deps.out.dim(`Default app for profile "${deps.profile}": ${current}`));
      }
    }
    return apps;
  }
}
