import { Flags } from '@oclif/core';
import { BaseCommand } from '../base-command.js';

export default class Login extends BaseCommand<typeof Login> {
  static summary = 'Sign in to the marketplace in your browser (OAuth with PKCE), or store an API key.';
  static description =
    'Opens the consent page in your browser and receives the answer on a one-shot listener at http://127.0.0.1:<port>/callback. Over SSH, in containers or with --no-browser it prints the URL and accepts the pasted redirect address or code on stdin. The client secret comes from MKT_CLIENT_SECRET, the credential store (filled by `mkt apps create`) or a masked prompt, never from the command line. With --with-api-key it reads a test_… or live_… key from stdin instead.';
  static examples = [
    '<%= config.bin %> login --client-id cli_123',
    '<%= config.bin %> login --no-browser',
    '<%= config.bin %> login --scope identity:read --scope apps:write',
    '<%= config.bin %> login --with-api-key < key.txt',
  ];
  static flags = {
    'client-id': Flags.string({ description: "OAuth client id (default: the profile's client-id setting)" }),
    scope: Flags.string({
      multiple: true,
      description: 'scope to ask for (repeatable; default: identity:read entitlements:read)',
    }),
    port: Flags.integer({
      min: 0,
      max: 65535,
      default: 0,
      description: 'port of the loopback listener (0 = any free port)',
    }),
    'no-browser': Flags.boolean({
      description: 'print the URL and read the redirect address or code from stdin',
    }),
    timeout: Flags.custom<number>({
      parse: async (v) => {
        const n = Number(v);
        if (!Number.isFinite(n) || n <= 0)
          throw new Error(`--timeout expects a number of seconds, not "${v}"`);
        return n;
      },
    })({ default: 300, description: 'seconds to wait for the sign-in' }),
    'with-api-key': Flags.boolean({
      description: 'read an API key (test_… or live_…) from stdin instead of signing in',
      exclusive: ['client-id', 'scope', 'port', 'no-browser'],
    }),
  };

  async run() {
    const deps = await this.deps();
    if (this.flags['with-api-key']) {
      const { loginWithApiKey } = await import('../auth/login.js');
      await loginWithApiKey(deps);
      return;
    }
    const { loginWithBrowser } = await import('../auth/login.js');
    await loginWithBrowser(deps, {
      clientId: this.flags['client-id'],
      scopes: this.flags.scope,
      port: this.flags.port,
      noBrowser: this.flags['no-browser'],
      timeoutSeconds: this.flags.timeout,
    });
  }
}
