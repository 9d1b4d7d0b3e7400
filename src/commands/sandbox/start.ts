import { Flags } from '@oclif/core';
import { join } from 'node:path';
import { BaseCommand } from '../../base-command.js';
import { flags } from '../../flags.js';
import { MktError } from '../../errors.js';
import { sandboxFolder } from '../../platform/paths.js';
import { DEFAULT_SANDBOX_PORT, DEFAULT_SITE_URL } from '../../wire.js';

export default class SandboxStart extends BaseCommand<typeof SandboxStart> {
  static summary = 'Run the built-in local marketplace on 127.0.0.1.';
  static description =
    'A complete marketplace for offline development: OAuth consent page, identity and entitlement API, apps, plans, keys, the Integration Simulator, signed webhook deliveries with retries, and the relay stream that `mkt webhooks listen` reads. It seeds a developer, an app, keys and test users on first start and prints them. State persists in --data-dir; Ctrl-C stops it cleanly.';
  static examples = [
    '<%= config.bin %> sandbox start',
    '<%= config.bin %> sandbox start --port 0 --data-dir ./.sandbox --reset',
    '<%= config.bin %> sandbox start --json > sandbox.json &',
    '<%= config.bin %> sandbox start --detach --port 0 --data-dir .sandbox --seed fixtures.json',
  ];
  static enableJsonFlag = true;
  static flags = {
    port: Flags.integer({
      description: 'port on 127.0.0.1 (0 = any free port)',
      default: DEFAULT_SANDBOX_PORT,
      min: 0,
      max: 65535,
    }),
    'data-dir': flags.sandboxDataDir('where state persists (default: the platform data folder)/sandbox'),
    reset: Flags.boolean({
      description: 'seed afresh (the earlier files are first moved into before-reset-<time>/ in the folder)',
    }),
    quiet: Flags.boolean({ char: 'q', description: 'do not log each request and delivery to stderr' }),
    seed: Flags.string({
      description:
        'seed an empty (or --reset) data folder from this fixtures file (JSON), checked before anything starts',
    }),
    detach: Flags.boolean({
      description:
        'run in the background: return once it answers, printing its address and environment as JSON (stop it with `mkt sandbox stop`; its log is sandbox.log in the data folder)',
    }),
  };

  async run() {
    // Ctrl-C and SIGTERM are taken before anything is announced: whoever reads the announcement may signal at once.
    const signal = this.signal;
    const deps = await this.deps();
    const { DamagedDataError, FolderInUseError, startSandbox } =
      await import('../../sandbox/start-sandbox.js');
    const folder = sandboxFolder(deps.env, this.flags['data-dir']);
    const fixtures =
      this.flags.seed === undefined
        ? undefined
        : await (await import('../../sandbox-run/seed-file.js')).readSeedFile(this.flags.seed);
    if (fixtures && !this.flags.reset)
      (await import('../../sandbox-run/detach.js')).refuseSeedOnState(folder);
    if (this.flags.detach) {
      const { detach } = await import('../../sandbox-run/detach.js');
      const argv = [
        '--data-dir',
        folder,
        '--port',
        String(this.flags.port),
        ...(this.flags.seed ? ['--seed', this.flags.seed] : []),
      ];
      this.logJson(
        await detach({
          bin: join(this.config.root, 'bin', 'run.js'),
          folder,
          argv: [...argv, ...(this.flags.reset ? ['--reset'] : [])],
        }),
      );
      return;
    }
    let sandbox: Awaited<ReturnType<typeof startSandbox>>;
    try {
      sandbox = await startSandbox({
        dataDir: folder,
        port: this.flags.port,
        reset: this.flags.reset,
        log: this.flags.quiet ? undefined : (line) => deps.out.info(deps.out.dim(line)),
        notice: (line) => deps.out.info(line),
        fixtures,
        checkAnswers: deps.env.MKT_SANDBOX_CHECK_ANSWERS || undefined,
        checkAnswersDocument: deps.env.MKT_SANDBOX_CHECK_ANSWERS_DOCUMENT || undefined,
      });
    } catch (err) {
      if (err instanceof FolderInUseError) throw new MktError('sandbox_running', err.message, 1);
      if (err instanceof DamagedDataError) throw new MktError('data_damaged', err.message, 1);
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
        // The port is taken first (startSandbox): a sandbox already on this folder is why, say that.
        const other = await (await import('../../sandbox-run/running.js')).findRunning(folder);
        if (other) {
          throw new MktError(
            'sandbox_running',
            new FolderInUseError(folder, { url: other.site_url, pid: other.pid }).message,
            1,
            { hints: [`mkt sandbox stop${this.flags['data-dir'] ? ` --data-dir ${folder}` : ''}`] },
          );
        }
        throw new MktError(
          'port_in_use',
          `Port ${this.flags.port} on 127.0.0.1 is already in use (a sandbox may be running).`,
          1,
          {
            hints: [
              'mkt sandbox start --port 0',
              `mkt api GET /whoami --site-url http://127.0.0.1:${this.flags.port}`,
            ],
          },
        );
      }
      throw err;
    }
    const stopped = new Promise((resolve) =>
      signal.aborted ? resolve(undefined) : signal.addEventListener('abort', resolve, { once: true }),
    );
    const { seed } = sandbox;
    const running = await import('../../sandbox-run/running.js');
    await running.writeRunning({
      pid: process.pid,
      port: sandbox.port,
      site_url: sandbox.siteUrl,
      data_dir: folder,
      started_at: new Date().toISOString(),
      seed,
    });
    const consoleLink = await sandbox.consoleLink();
    const info = { site_url: sandbox.siteUrl, data_dir: folder, console_url: consoleLink.url, ...seed };
    if (deps.json) this.logJson(info);
    else {
      deps.out.fields([
        ['Site URL', sandbox.siteUrl],
        ['Data dir', folder],
        ['Console', `${consoleLink.url}   (one-time link, 5 minutes; later: mkt sandbox console)`],
        ['Developer', `${seed.developer.name} <${seed.developer.email}> (${seed.developer.id})`],
        ['App', `${seed.app.name} (${seed.app.id})`],
        ['Client ID', seed.app.client_id],
        ['Client secret', seed.app.client_secret],
        ['Redirect URIs', seed.app.redirect_uris.join(' ')],
        ['Webhook secret', seed.app.webhook_secret],
        ['Test key', seed.test_key],
        ['Live key', seed.live_key],
        ['Plans', seed.plans.map((p) => `${p.id} (${p.kind})`).join(', ')],
        ['Test users', seed.users.map((u) => `${u.id} ${u.email} ${u.plan}/${u.status}`).join('; ')],
      ]);
      const site = sandbox.siteUrl === DEFAULT_SITE_URL ? '' : ` --site-url ${sandbox.siteUrl}`;
      deps.out.info('');
      deps.out.info('Try it, in another terminal:');
      deps.out.info(
        `  MKT_CLIENT_SECRET=${seed.app.client_secret} mkt login --client-id ${seed.app.client_id} --scope apps:write${site}`,
      );
      deps.out.info(
        `  MKT_API_KEY=${seed.test_key} mkt entitlements --user ${seed.users[0]?.id ?? 'usr_…'}${site}`,
      );
      deps.out.info(
        `  MKT_API_KEY=${seed.test_key} mkt webhooks listen --app ${seed.app.id} --forward-to http://127.0.0.1:3000/webhooks${site}`,
      );
      deps.out.info('Press Ctrl-C to stop.');
    }
    await stopped;
    deps.out.info('Stopping the sandbox (every acknowledged change is already on disk)…');
    await sandbox.close();
    await running.removeRunning(folder, process.pid);
    deps.out.info('Stopped.');
    throw signal.reason;
  }
}
