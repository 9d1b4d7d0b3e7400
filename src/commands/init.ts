import { Flags } from '@oclif/core';
import { BaseCommand } from '../base-command.js';
import { arg } from '../flags.js';

export default class Init extends BaseCommand<typeof Init> {
  static summary =
    'Start a new app: register it and write a project that signs users in and verifies webhooks.';
  static description = `Registers the app on the site mkt talks to (the sandbox by default; needs \`mkt login --scope apps:write\`)
with its redirect URI, and embed URL on http://localhost:PORT, and writes a small project into DIR: the
sign-in route and callback (code flow with PKCE and state), a webhook route that verifies every
delivery, an entitlement check before a paid feature, and the page the dashboard embeds, with its
tests, mkt.json (the app, its port and command; every mkt command run in DIR acts on this app) and
mkt.fixtures.json (the app for a fresh sandbox in CI: \`mkt sandbox exec --seed mkt.fixtures.json -- npm test\`).
The app's secrets go into DIR/.env (0600, git-ignored); a value a site sends with a line break or
control character is refused before anything is written. DIR must be new, or an empty folder of
yours nobody else can write. On a local sandbox it also creates a free plan and a test user to sign
in as. Then: \`mkt dev\` in DIR. The Node template is JavaScript for Node.js 20.12 or later.`;
  static examples = [
    '<%= config.bin %> init my-app --name "My App" --template node',
    '<%= config.bin %> init billing-bot --name "Billing Bot" --template python --port 5050',
  ];
  static enableJsonFlag = true;
  static args = { dir: arg({ description: 'folder to create (default: from the name)' }) };
  static flags = {
    name: Flags.string({ description: "the app's display name" }),
    template: Flags.string({
      description: 'node (Node.js 20.12+, Hono) or python (Flask)',
      options: ['node', 'python'],
    }),
    port: Flags.integer({
      description: 'the port the app serves on (default: 3000 node, 5000 python)',
      min: 1,
      max: 65535,
    }),
  };

  async run() {
    const deps = await this.deps();
    const { askMissing } = await import('../platform/prompts.js');
    const { initApp, TEMPLATES } = await import('../init/init.js');
    const { slugify } = await import('../plans/plans.js');
    const answers = await askMissing(
      deps,
      { name: this.flags.name, template: this.flags.template },
      {
        name: { flag: '--name NAME', message: "The app's name" },
        template: { flag: '--template node|python', message: 'Template', choices: Object.keys(TEMPLATES) },
      },
      'mkt init',
    );
    const result = await initApp(deps, {
      dir: this.args.dir ?? (slugify(answers.name) || 'marketplace-app'),
      name: answers.name,
      template: answers.template as keyof typeof TEMPLATES,
      port: this.flags.port,
    });
    if (!deps.json) {
      deps.out.success(`Created app ${answers.name} (${result.app_id}) and wrote ${result.dir}.`);
      deps.out.fields([
        ['Client ID', result.client_id],
        ['App URL', result.app_url],
        ['Secrets', `${result.dir}/.env (0600, git-ignored)`],
        ...(result.test_user_id ? ([['Test user', result.test_user_id]] as Array<[string, unknown]>) : []),
      ]);
      deps.out.info('\nNext:');
      for (const line of result.next) deps.out.info(`  ${line}`);
    }
    return result;
  }
}
