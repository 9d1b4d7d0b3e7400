import { BaseCommand } from '../../base-command.js';

export default class AuthList extends BaseCommand<typeof AuthList> {
  static summary = 'List every stored sign-in, per site, with the active one of each profile marked.';
  static description =
    'Reads the credential store only (nothing is sent). A profile may hold several accounts of a site: `mkt login` as another user keeps the one before, `mkt auth switch` chooses which one commands use.';
  static examples = ['<%= config.bin %> auth list', '<%= config.bin %> auth list --json'];
  static enableJsonFlag = true;

  async run() {
    const deps = await this.deps();
    const { accountLabel, allAccounts } = await import('../../auth/accounts.js');
    const list = await allAccounts(deps);
    const sites = [...new Set(list.map((a) => a.site_url))].sort();
    const doc = {
      sites: sites.map((site_url) => ({
        site_url,
        accounts: list
          .filter((a) => a.site_url === site_url)
          .map(({ profile, active, id, kind, user, client_id }) => ({
            profile,
            active,
            id,
            kind,
            user,
            client_id,
          })),
      })),
    };
    if (!deps.json) {
      if (!list.length) deps.out.info('No sign-in is stored. Sign in with: mkt login');
      const kinds = { token: 'OAuth token', test_key: 'test API key', live_key: 'LIVE API key' };
      for (const site of doc.sites) {
        deps.out.data(deps.out.bold(site.site_url));
        for (const a of list.filter((x) => x.site_url === site.site_url)) {
          const mark = a.active ? deps.out.paint('green', '✓') : ' ';
          const state = a.active ? 'active' : 'kept (mkt auth switch)';
          deps.out.data(`  ${mark} ${accountLabel(a)}  profile "${a.profile}", ${kinds[a.kind]}, ${state}`);
        }
      }
    }
    return doc;
  }
}
