import { BaseCommand } from '../base-command.js';
import { whoami } from '../identity/identity.js';

export default class Whoami extends BaseCommand<typeof Whoami> {
  static summary = 'Show the profile of the signed-in user (or of the API key owner).';
  static examples = ['<%= config.bin %> whoami', '<%= config.bin %> whoami --json'];
  static enableJsonFlag = true;

  async run() {
    const deps = await this.deps();
    const profile = await whoami(deps);
    if (!deps.json) {
      deps.out.fields([
        ['ID', profile.id],
        ['Name', profile.name],
        ['Email', profile.email],
        ['Avatar', profile.avatar_url],
      ]);
    }
    return profile;
  }
}
