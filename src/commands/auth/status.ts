import { BaseCommand } from '../../base-command.js';
import { authStatus } from '../../auth/status.js';
import { describeUser } from '../../auth/login.js';

export default class AuthStatus extends BaseCommand<typeof AuthStatus> {
  static summary = 'Show who you are signed in as, with what kind of credential, and where it is kept.';
  static description =
    'Checks the credential with GET /whoami (refreshing a token first). Exits 4 when not signed in.';
  static examples = ['<%= config.bin %> auth status', '<%= config.bin %> auth status --json'];
  static enableJsonFlag = true;

  async run() {
    const deps = await this.deps();
    const status = await authStatus(deps);
    if (!deps.json) {
      const kind = { token: 'OAuth token', test_key: 'test API key', live_key: 'LIVE API key' }[status.kind];
      const source =
        status.source === 'env'
          ? `environment (${status.kind === 'token' ? 'MKT_ACCESS_TOKEN' : 'MKT_API_KEY'})`
          : status.source === 'file'
            ? `file ${status.store} (${deps.env.MKT_CREDENTIAL_STORE === 'file' ? 'chosen with MKT_CREDENTIAL_STORE=file' : 'no OS keychain answered; choose with MKT_CREDENTIAL_STORE=keychain|file'})`
            : status.source;
      deps.out.fields([
        ['Site', status.site_url],
        ['Profile', status.profile],
        ['Credential', status.live ? deps.out.paint('red', kind) : kind],
        ['Source', source],
        ['User', status.user ? describeUser(status.user) : undefined],
        ['App', status.app ? `${status.app.name ?? status.app.id} (${status.app.id})` : undefined],
        ['Client id', status.client_id],
        ['Expires', status.expires_at],
        ['Scopes', status.scopes.join(' ')],
      ]);
      const others = status.accounts.filter((a) => !a.active);
      if (others.length)
        deps.out.info(
          `Also signed in here: ${others.map((a) => a.user?.email ?? a.id).join(', ')} (mkt auth switch; mkt auth list shows every site).`,
        );
      if (status.live)
        deps.out.warn('This profile uses a live key: calls act on real users and real payments.');
    }
    return status;
  }
}
