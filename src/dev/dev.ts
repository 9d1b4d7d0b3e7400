// `mkt dev`: the whole local loop with one command — the sandbox (when the site is the local
// default and nothing answers there), the app's own server, and `mkt webhooks listen` forwarding to
// its webhook route — then the app's and the dashboard preview's addresses. Ctrl-C stops what it
// started and nothing else.
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Deps } from '../deps.js';
import { MktError, UsageError } from '../errors.js';
import { PROJECT_FILE, type ProjectFile } from '../init/init.js';
import { Supervisor, type ProcessSpec } from './supervisor.js';

export interface DevInput {
  dir: string;
  command?: string;
  port?: number;
  app?: string;
  signal: AbortSignal;
}

type DevDeps = Deps;

/** Credentials mkt itself may hold in its environment: never handed to the app's server. */
const MKT_SECRETS = ['MKT_API_KEY', 'MKT_ACCESS_TOKEN', 'MKT_CLIENT_SECRET', 'MKT_WEBHOOK_SECRET'];

/** The project's mkt.json (written by `mkt init`), or undefined where there is none. */
function readProject(dir: string): Partial<ProjectFile> | undefined {
  const file = join(dir, PROJECT_FILE);
  if (!existsSync(file)) return undefined;
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as Partial<ProjectFile>;
    if (
      value.command !== undefined &&
      !(Array.isArray(value.command) && value.command.every((a) => typeof a === 'string'))
    ) {
      throw new Error('"command" must be an array of strings');
    }
    return value;
  } catch (err) {
    throw new UsageError(`${file} is not a project file mkt can read: ${(err as Error).message}.`, {
      code: 'bad_project_file',
    });
  }
}

async function answers(siteUrl: string): Promise<boolean> {
  return fetch(`${siteUrl}/.well-known/oauth-authorization-server`, {
    signal: AbortSignal.timeout(2_000),
  }).then(
    (res) => res.ok,
    () => false,
  );
}

async function waitUntilAnswering(siteUrl: string, signal: AbortSignal): Promise<void> {
  for (let i = 0; i < 150 && !signal.aborted; i += 1) {
    if (await answers(siteUrl)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (!signal.aborted)
    throw new MktError('sandbox_not_ready', `The sandbox did not answer at ${siteUrl} within 15 s.`, 1);
}

/** Whether something already listens on localhost:port (the app would fail to start, or worse, be another). */
function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: 'localhost' });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** Runs the loop until `input.signal` aborts, then stops everything it started. */
export async function runDev(deps: DevDeps, input: DevInput): Promise<void> {
  const project = readProject(input.dir);
  if (!project && !input.command) {
    throw new UsageError(
      `No ${PROJECT_FILE} in ${input.dir} and no --command: mkt dev runs a project made by mkt init.`,
      {
        code: 'no_project',
        hints: ['mkt init my-app --template node', 'mkt dev --command "npm start" --port 3000 --app APP_ID'],
      },
    );
  }
  const port = input.port ?? project?.port ?? 3000;
  const { resolveAppId } = await import('../apps/resolve.js');
  const appId = await resolveAppId(deps, { app: input.app ?? project?.app_id });
  const mkt = [process.execPath, process.argv[1]!];
  const global = ['--profile', deps.profile, '--site-url', deps.siteUrl];
  const supervisor = new Supervisor(deps.out, 'webhooks'.length);
  try {
    if (!(await answers(deps.siteUrl))) {
      if (deps.siteUrlSource !== 'default') {
        throw new MktError(
          'unreachable',
          `Nothing answers at ${deps.siteUrl} (the site of profile "${deps.profile}").`,
          6,
          {
            hints: ['mkt sandbox start', 'mkt config unset site-url   (to use the local sandbox)'],
          },
        );
      }
      supervisor.add({
        name: 'sandbox',
        command: [...mkt, 'sandbox', 'start', '--quiet'],
        env: process.env,
        style: 'dim',
      });
      await waitUntilAnswering(deps.siteUrl, input.signal);
    }
    if (await portInUse(port)) {
      throw new MktError(
        'port_in_use',
        `Port ${port} on this machine is already in use (another copy of the app?).`,
        1,
        {
          hints: [`mkt dev --port ${port + 1}   (and the same port in .env and the app's redirect URI)`],
        },
      );
    }
    const appEnv: NodeJS.ProcessEnv = { ...process.env, PORT: String(port) };
    for (const name of MKT_SECRETS) delete appEnv[name];
    const command = input.command
      ? process.platform === 'win32'
        ? ['cmd.exe', '/d', '/s', '/c', input.command]
        : ['/bin/sh', '-c', input.command]
      : project!.command!;
    const specs: ProcessSpec[] = [
      { name: 'app', command, cwd: input.dir, env: appEnv, style: 'green' },
      {
        name: 'webhooks',
        command: [
          ...mkt,
          'webhooks',
          'listen',
          ...global,
          '--app',
          appId,
          '--forward-to',
          `http://localhost:${port}/webhooks`,
        ],
        env: process.env,
        style: 'yellow',
      },
    ];
    for (const spec of specs) supervisor.add(spec);
    deps.out.info(`App:      http://localhost:${port}`);
    const { previewApp } = await import('../apps/embedded.js');
    await previewApp(deps, { app: appId }).then(
      (preview) => deps.out.info(`Preview:  ${preview.url}`),
      () => undefined,
    );
    deps.out.info(deps.out.dim('Ctrl-C stops the app, the listener and any sandbox mkt dev started.'));
    await new Promise((resolve) =>
      input.signal.aborted
        ? resolve(undefined)
        : input.signal.addEventListener('abort', resolve, { once: true }),
    );
  } finally {
    await supervisor.stop();
  }
}
