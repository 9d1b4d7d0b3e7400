import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';

export default class SandboxConsole extends BaseCommand<typeof SandboxConsole> {
  static summary = "Open the sandbox's developer console in the browser with a fresh one-time link.";
  static description = `The link signs you in once, within 5 minutes; the console then keeps you signed in (a cookie for /console only). On a terminal the link is opened in your browser ($MKT_BROWSER, else $BROWSER, else the system's) through a file only you can read, so that no other process sees the link; otherwise, with no display, or with --no-browser, it is printed on stdout. Run it again for a new link.`;
  static examples = [
    '<%= config.bin %> sandbox console',
    '<%= config.bin %> sandbox console --no-browser',
    '<%= config.bin %> sandbox console --site-url http://127.0.0.1:7979 --json',
  ];
  static enableJsonFlag = true;
  static flags = {
    browser: Flags.boolean({
      description: 'open the link in the browser (default on a terminal; --no-browser prints it)',
      allowNo: true,
    }),
  };

  async run() {
    const deps = await this.deps();
    const { openConsole } = await import('../../console-link/link.js');
    const link = await openConsole(deps, { open: this.flags.browser ?? deps.out.interactive });
    if (deps.json) return link;
    if (link.opened) {
      deps.out.success('Opened the console in your browser (the link works once, for 5 minutes).');
      deps.out.info(
        `If it did not open, open this file in your browser (only you can read it): ${link.launch_file}`,
      );
      return link;
    }
    if (link.not_opened_because)
      deps.out.warn(
        `Could not open a browser (${link.not_opened_because}). Open this link yourself; it works once, for 5 minutes:`,
      );
    deps.out.data(link.url);
    return link;
  }
}
