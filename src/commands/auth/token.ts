import { BaseCommand } from '../../base-command.js';
import { accessToken } from '../../auth/status.js';

export default class AuthToken extends BaseCommand<typeof AuthToken> {
  static summary = 'Print a valid access token for scripts (refreshed first when it is about to expire).';
  static examples = ['curl -H "Authorization: Bearer $(<%= config.bin %> auth token)" …'];

  async run() {
    const deps = await this.deps();
    deps.out.data(await accessToken(deps));
  }
}
