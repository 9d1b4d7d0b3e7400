import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { previewApp } from '../../apps/embedded.js';
import { flags } from '../../flags.js';

export default class AppsPreview extends BaseCommand<typeof AppsPreview> {
  static summary = "Open the marketplace dashboard that embeds the app's page for a test user.";
  static description = `Prints the dashboard URL (on stdout) and, on a terminal with a browser, opens it. The dashboard frames the
app's embed URL with a context_token (a JWT signed with the client secret) for that user; without
--user it lets you pick one. An app without an embed URL is refused with the command that sets one.`;
  static examples = [
    '<%= config.bin %> apps preview --user usr_123',
    '<%= config.bin %> apps preview --app app_123 --no-browser',
  ];
  static enableJsonFlag = true;
  static flags = {
    app: flags.app(),
    user: Flags.string({
      description: 'test user id (usr_…) the app is shown to; default: pick on the page',
    }),
    'no-browser': Flags.boolean({ description: 'only print the URL' }),
  };

  async run() {
    const deps = await this.deps();
    const preview = await previewApp(deps, { app: this.flags.app, user: this.flags.user });
    if (deps.json) return preview;
    deps.out.data(preview.url);
    const { isHeadless } = await import('../../auth/login.js');
    if (deps.out.interactive && !this.flags['no-browser'] && !isHeadless(deps.env)) {
      // The URL is a capability (a preview pass): the browser gets a file only this user can read.
      const { openPrivately } = await import('../../platform/launcher.js');
      await openPrivately(deps, preview.url, `Open the dashboard of ${preview.app_id}`).then(
        () => deps.out.success(`Opened the dashboard of ${preview.app_id} in your browser.`),
        (err: Error) =>
          deps.out.warn(`Could not open a browser (${err.message}); open the URL above yourself.`),
      );
    }
    return preview;
  }
}
