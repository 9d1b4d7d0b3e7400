import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { flags } from '../../flags.js';

export default class SimulatorAuthorize extends BaseCommand<typeof SimulatorAuthorize> {
  static summary = 'Authorize the app for a test user without a browser; prints the access token.';
  static description =
    'Piped or captured (T=$(mkt simulator authorize --user usr_…)), stdout is the access token alone; on a terminal, the whole token response; --json prints the response as JSON. Emits user.authorized.';
  static examples = [
    '<%= config.bin %> simulator authorize --user usr_123',
    '<%= config.bin %> simulator authorize --user usr_123 --scope identity:read --scope entitlements:read --json',
  ];
  static enableJsonFlag = true;
  static flags = {
    app: flags.app(),
    user: flags.testUser(),
    scope: Flags.string({
      description: 'scope to grant (repeatable or space/comma-separated)',
      multiple: true,
    }),
  };

  async run() {
    const deps = await this.deps();
    const { authorizeTestUser } = await import('../../simulator/simulator.js');
    const scopes = (this.flags.scope ?? []).flatMap((s) => s.split(/[\s,]+/)).filter(Boolean);
    const tokens = await authorizeTestUser(deps, {
      app: this.flags.app,
      userId: this.flags.user,
      scopes,
    });
    if (deps.json) return tokens;
    if (!deps.out.interactive) deps.out.data(String(tokens.access_token));
    else {
      deps.out.fields(Object.entries(tokens));
      deps.out.info(deps.out.dim('Try: MKT_ACCESS_TOKEN=<access_token> mkt whoami'));
    }
    return tokens;
  }
}
