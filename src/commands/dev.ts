import { Flags } from '@oclif/core';
import { BaseCommand } from '../base-command.js';

export default class Dev extends BaseCommand<typeof Dev> {
  static summary =
    "Run the local loop: the sandbox, your app's server and `webhooks listen` forwarding to it.";
  static description = `In a project made by \`mkt init\` (its mkt.json names the app, its port and its command), or anywhere
with --command: checks what the app needs (its Node.js or Python, its installed dependencies) and
says the one fix when something is missing; starts the sandbox when the site is the local default
and nothing answers there (its banner is left out), the app's server (reloaded when a file changes:
node --watch, Flask's reloader; an app that exits right after it started is started again when a
file of the project changes), and \`mkt webhooks listen\` forwarding to http://localhost:PORT/webhooks;
prints the app's address once it answers, and the dashboard preview. Warns when .env's webhook
secret is not the app's current one. One mkt dev per app: a second one names the running one (pid).
Ctrl-C stops everything it started, and nothing else. mkt's own credentials are never passed to the
app; it reads its .env.`;
  static examples = [
    '<%= config.bin %> dev',
    '<%= config.bin %> dev --command "npm start" --port 8080 --app app_123',
  ];
  static flags = {
    command: Flags.string({
      description: "the app's server, run by the shell (default: mkt.json's command)",
    }),
    port: Flags.integer({ description: "the app's port (default: mkt.json's, or 3000)", min: 1, max: 65535 }),
    app: Flags.string({ description: "the app's id (default: mkt.json's, or `mkt apps use`)" }),
  };

  async run() {
    const signal = this.signal;
    const deps = await this.deps();
    const { runDev } = await import('../dev/dev.js');
    await runDev(deps, {
      dir: process.cwd(),
      command: this.flags.command,
      port: this.flags.port,
      app: this.flags.app,
      signal,
    });
    throw signal.reason;
  }
}
