import { BaseCommand } from '../base-command.js';
import { showWhoami } from '../identity/show.js';

export default class Whoami extends BaseCommand<typeof Whoami> {
  static summary = 'Show the profile of the signed-in user (or of the API key owner).';
  static examples = ['<%= config.bin %> whoami', '<%= config.bin %> whoami --json'];
  static enableJsonFlag = true;

  async run() {
    return showWhoami(await this.deps());
  }
}
