import { Flags } from '@oclif/core';
import { BaseCommand } from '../base-command.js';

export default class Login extends BaseCommand<typeof Login> {
  static summary = 'Sign in to the marketplace in your browser (OAuth with PKCE), or store an API key.';
  static description =
    'Opens the consent page in your browser and receives the answer on a one-shot listener at http://127.0.0.1:<port>/callback. Over SSH, in containers or with --no-browser it prints the URL and accepts the pasted redirect address or code on stdin. With --device (chosen by itself when there is no browser and stdin is not a terminal, where the server offers it) it shows an address and a code to enter on any other device (RFC 8628). The client secret comes from MKT_CLIENT_SECRET, the credential store (filled by `mkt apps create`, `apps rotate-secret` and by each login that succeeded with a secret given) or a masked prompt, never from the command line. With --with-api-key it reads a test_… or live_… key from stdin instead.';
  static examples = [
    '<%= config.bin %> login --client-id cid_123',
    '<%= config.bin %> login --no-browser',
    '<%= config.bin %> login --device   (over SSH: enter a code on any other device)',
    '<%= config.bin %> login --scope identity:read --scope apps:write',
    '<%= config.bin %> login --with-api-key < key.txt',
  ];
  static flags = {
    'client-id': Flags.string({ description: "OAuth client id (default: the profile's client-id setting)" }),
    scope: Flags.string({
      multiple: true,
      description: 'scope to ask for besides identity:read and entitlements:read (repeatable)',
    }),
    port: Flags.integer({
      min: 0,
      max: 65535,
      description: 'port of the loopback listener (default: any free port)',
    }),
    'no-browser': Flags.boolean({
      description: 'print the URL and read the redirect address or code from stdin',
    }),
    device: Flags.boolean({
      description:
        'sign in on another device: mkt shows an address and a code to enter there (RFC 8628, where the server offers it)',
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
    }),
  };

  async run() {
    const deps = await this.deps();
    if (this.flags['with-api-key']) {
      const browserOnly = (['client-id', 'scope', 'port', 'no-browser', 'device'] as const).filter(
        (name) => this.flags[name] !== undefined && this.flags[name] !== false,
      );
      if (browserOnly.length) {
        const { UsageError } = await import('../errors.js');
        throw new UsageError(
          `--with-api-key reads a key from stdin; --${browserOnly.join(', --')} applies only to the browser sign-in.`,
          { hints: ['mkt login --with-api-key < key.txt'] },
        );
      }
      const { loginWithApiKey } = await import('../auth/api-key-login.js');
      await loginWithApiKey(deps);
      return;
    }
    const clash = (['port', 'no-browser'] as const).filter(
      (name) => this.flags[name] !== undefined && this.flags[name] !== false,
    );
    if (this.flags.device && clash.length) {
      const { UsageError } = await import('../errors.js');
      throw new UsageError(
        `--device signs in on another device without a listener or a pasted address; --${clash.join(', --')} applies only to the browser sign-in.`,
        { hints: ['mkt login --device'] },
      );
    }
    const { canPaste, isHeadless, loginWithBrowser } = await import('../auth/login.js');
    // No browser here and nothing to paste into: the device sign-in, where the server offers it.
    const auto = !this.flags.device && !clash.length && isHeadless(deps.env) && !(await canPaste(deps.stdin));
    if (this.flags.device || auto) {
      const { deviceSignInOffered, loginWithDevice } = await import('../auth/device.js');
      const endpoint = await deviceSignInOffered(deps);
      if (endpoint || this.flags.device) {
        if (auto)
          deps.out.info(
            'No browser here and no terminal to paste into: signing in with a code on another device.',
          );
        await loginWithDevice(
          deps,
          { clientId: this.flags['client-id'], scopes: this.flags.scope, timeoutSeconds: this.flags.timeout },
          endpoint,
        );
        return;
      }
    }
    await loginWithBrowser(deps, {
      clientId: this.flags['client-id'],
      scopes: this.flags.scope,
      port: this.flags.port,
      noBrowser: this.flags['no-browser'],
      timeoutSeconds: this.flags.timeout,
    });
  }
}
