// `mkt dev`: the whole local loop with one command — the sandbox (when the site is the local
// default and nothing answers there), the app's own server (reloaded on edit), and
// `mkt webhooks listen` forwarding to its webhook route — then the app's address once it answers.
// Ctrl-C stops what it started and nothing else.
import { join } from 'node:path';
import type { Deps } from '../deps.js';
import { MktError, UsageError } from '../errors.js';
import { PROJECT_FILE, readProject } from '../init/project.js';
import { checkApp } from './preflight.js';
import { readOwnFileSync, removeSync, writeFileAtomicSync } from '../platform/fs-atomic.js';
import { stopGroupOf, type ProcessMark } from '../platform/processes.js';
import { dataDir } from '../platform/paths.js';
import { safeText } from '../output/safe-text.js';
import { Supervisor, type ProcessSpec } from './supervisor.js';
import { checkEnvSecret, portInUse, siteAnswers, waitUntil } from './checks.js';

export interface DevInput {
  dir: string;
  command?: string;
  port?: number;
  app?: string;
  signal: AbortSignal;
}

/** Credentials mkt itself may hold in its environment: never handed to the app's server. */
const MKT_SECRETS = ['MKT_API_KEY', 'MKT_ACCESS_TOKEN', 'MKT_CLIENT_SECRET', 'MKT_WEBHOOK_SECRET'];

/** Runs the loop until `input.signal` aborts, then stops everything it started. */
export async function runDev(deps: Deps, input: DevInput): Promise<void> {
  const project = readProject(input.dir)?.file;
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
  const appEnv: NodeJS.ProcessEnv = { ...deps.env, PORT: String(port) };
  for (const name of MKT_SECRETS) delete appEnv[name];
  const command = input.command
    ? process.platform === 'win32'
      ? ['cmd.exe', '/d', '/s', '/c', input.command]
      : ['/bin/sh', '-c', input.command]
    : await checkApp(input.dir, project!, project!.command ?? [], appEnv);

  // One mkt dev per app: a second one names the first instead of finding its port busy.
  const { FileLock } = await import('../platform/lock-file.js');
  const lock = await FileLock.tryAcquire(join(dataDir(deps.env), 'dev', `${appId}.lock`), {
    fields: { dir: input.dir, port },
    label: 'mkt dev lock',
    warn: (m) => deps.out.warn(m),
  });
  if (!(lock instanceof FileLock)) {
    throw new MktError(
      'dev_running',
      `mkt dev already runs for ${appId} (pid ${lock.pid}, in ${String(lock.dir)}, the app on http://localhost:${String(lock.port)}).`,
      1,
      { hints: [`kill -INT ${lock.pid}   (or Ctrl-C in its terminal), then: mkt dev`] },
    );
  }
  const mkt = [process.execPath, process.argv[1]!];
  const global = ['--profile', deps.profile, '--site-url', deps.siteUrl];
  // What runs is recorded beside the lock: a mkt dev killed outright (kill -9) leaves its processes
  // running, and the next one ends them, those it can prove are the same (src/platform/processes.ts).
  const running = join(dataDir(deps.env), 'dev', `${appId}.running.json`);
  await stopLeftovers(deps, running);
  const supervisor = new Supervisor(deps.out, 'webhooks'.length, (marks) =>
    writeFileAtomicSync(running, `${JSON.stringify(marks)}\n`),
  );
  try {
    if (!(await siteAnswers(deps.siteUrl))) {
      if (deps.siteUrlSource !== 'default') {
        throw new MktError(
          'unreachable',
          `Nothing answers at ${deps.siteUrl} (the site of profile "${deps.profile}").`,
          6,
          { hints: ['mkt sandbox start', 'mkt config unset site-url   (to use the local sandbox)'] },
        );
      }
      // Its banner names the seed app; this project's lines are the app's and its listener's.
      supervisor.add({
        name: 'sandbox',
        command: [...mkt, 'sandbox', 'start', '--quiet'],
        env: deps.env,
        style: 'dim',
        show: 'stderr',
      });
      if (!(await waitUntil(() => siteAnswers(deps.siteUrl), 15_000, input.signal)) && !input.signal.aborted)
        throw new MktError(
          'sandbox_not_ready',
          `The sandbox did not answer at ${deps.siteUrl} within 15 s.`,
          1,
        );
      deps.out.info(`Sandbox:  ${deps.siteUrl}`);
    }
    if (await portInUse(port)) {
      throw new MktError(
        'port_in_use',
        `Port ${port} on this machine is already in use by another program.`,
        1,
        {
          hints: [`mkt dev --port ${port + 1}   (and the same port in mkt.json and the app's redirect URI)`],
        },
      );
    }
    if (project) await checkEnvSecret(deps, input.dir, appId);
    const specs: ProcessSpec[] = [
      { name: 'app', command, cwd: input.dir, env: appEnv, style: 'green', watch: input.dir },
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
        env: deps.env,
        style: 'yellow',
      },
    ];
    for (const spec of specs) supervisor.add(spec);
    const url = `http://localhost:${port}`;
    void waitUntil(() => appAnswers(url), 120_000, input.signal).then(async (up) => {
      if (!up) return;
      deps.out.info(`App:      ${url}`);
      const { previewApp } = await import('../apps/embedded.js');
      await previewApp(deps, { app: appId }).then(
        (preview) => deps.out.info(`Preview:  ${preview.url}`),
        () => undefined,
      );
    });
    deps.out.info(deps.out.dim('Ctrl-C stops the app, the listener and any sandbox mkt dev started.'));
    await new Promise((resolve) =>
      input.signal.aborted
        ? resolve(undefined)
        : input.signal.addEventListener('abort', resolve, { once: true }),
    );
  } finally {
    await supervisor.stop();
    removeSync(running);
    await lock.release();
  }
}

/** Ends what a killed mkt dev of this app left running, as recorded in `path`, and says so. */
async function stopLeftovers(deps: Deps, path: string): Promise<void> {
  // A link or another user's file there is refused (RefusedError), as every state file of mkt's.
  const text = readOwnFileSync(path, { maxBytes: 64 * 1024, code: 'dev_state_refused' });
  if (text === undefined) return;
  let marks: Record<string, ProcessMark> = {};
  try {
    marks = JSON.parse(text) as Record<string, ProcessMark>;
  } catch {
    // Torn or not ours: nothing provable to end.
  }
  for (const [name, mark] of Object.entries(marks).slice(0, 8)) {
    if (typeof mark !== 'object' || mark === null) continue;
    if (await stopGroupOf({ pid: Number(mark.pid), start: mark.start && String(mark.start) }))
      deps.out.warn(
        `Stopped the ${safeText(name)} a previous mkt dev left running (pid ${Number(mark.pid)}).`,
      );
  }
  removeSync(path);
}

/** Whether the app answers HTTP at `url` (any status). */
const appAnswers = (url: string) =>
  fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(1_000) }).then(
    async (res) => (await res.body?.cancel(), true),
    () => false,
  );
