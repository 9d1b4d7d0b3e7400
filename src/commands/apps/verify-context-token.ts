import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { arg, flags } from '../../flags.js';

export default class AppsVerifyContextToken extends BaseCommand<typeof AppsVerifyContextToken> {
  static summary = 'Check the context token an embedded page received, and say why it fails.';
  static description = `Exit 0 with the token's claims when it is valid; exit 3 with the most likely reason otherwise:
not a JWT, a wrong algorithm ("none" is refused), a wrong secret, an altered token, expired (by how
much), not yet valid, or made for another site (iss) or app (aud). The token comes from the argument or
stdin (the framed page's whole URL works too). The client secret comes from $MKT_CLIENT_SECRET or the
credential store (filled by \`mkt apps create\` and \`apps rotate-secret\`), never from the command line.`;
  static examples = [
    '<%= config.bin %> apps verify-context-token eyJhbGciOiJIUzI1NiIs…',
    'pbpaste | <%= config.bin %> apps verify-context-token --app app_123 --json',
    'MKT_CLIENT_SECRET=… <%= config.bin %> apps verify-context-token --client-id cli_123 "$TOKEN"',
  ];
  static enableJsonFlag = true;
  static args = {
    token: arg({ description: 'the context_token value, or the framed page URL (default: stdin)' }),
  };
  static flags = {
    app: flags.app(),
    'client-id': Flags.string({
      description: 'the client id the token must be made for (no request to the marketplace)',
      exclusive: ['app'],
    }),
    tolerance: Flags.integer({
      description: 'seconds of clock difference forgiven on exp and nbf',
      default: 0,
      min: 0,
    }),
  };

  async run() {
    const deps = await this.deps();
    const { verifyContext } = await import('../../apps/embedded.js');
    const result = await verifyContext(deps, {
      token: this.args.token,
      app: this.flags.app,
      clientId: this.flags['client-id'],
      toleranceS: this.flags.tolerance,
    });
    if (!deps.json) {
      const { duration, iso } = await import('../../wire/context-token.js');
      const c = result.claims;
      deps.out.fields([
        ['user (sub)', c.sub],
        ['app', c.app_id],
        ['client (aud)', c.aud],
        ['issuer', c.iss],
        ['issued', iso(c.iat)],
        ['expires', iso(c.exp)],
        ['id (jti)', c.jti],
      ]);
      deps.out.success(
        `Valid context token (checked with the client secret from ${result.secret_source}); it expires in ${duration(result.expires_in_s)}.`,
      );
    }
    return result;
  }
}
