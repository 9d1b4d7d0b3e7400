import { constants } from 'node:os';
import { MktError } from '../errors.js';
import { appendFileChecked } from '../platform/fs-atomic.js';
import { spawnChild, tempFolder } from '../platform/processes.js';
import { safeText } from '../output/safe-text.js';
import type { Fixtures } from '../sandbox/fixtures/schema.js';
import { sandboxEnv } from './env.js';

/** What `mkt sandbox exec` runs and how. */
export interface ExecInput {
  command: string;
  args: string[];
  /** The environment CMD inherits (ours), before the sandbox's variables are added. */
  env: NodeJS.ProcessEnv;
  port: number;
  seed?: { fixtures: Fixtures; digest: string };
  /** Where the sandbox's own lines go: stderr (--verbose), a file (--log-file), or nowhere. */
  log?: { stderr?: NodeJS.WritableStream; file?: string };
}

const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Starts a fresh sandbox in a temporary folder on a free port, runs CMD with the sandbox's
 * environment (sandboxEnv), stops the sandbox and removes the folder. Answers CMD's exit code, or
 * 128 + n when a signal n ended it. Signals that reach mkt are passed on to CMD.
 */
export async function execInSandbox(input: ExecInput): Promise<number> {
  const { startSandbox } = await import('../sandbox/start-sandbox.js');
  // Removed when this ends, and by the processes door when mkt exits early (a second Ctrl-C): the
  // database in it holds every secret of this sandbox.
  const temp = tempFolder('mkt-sandbox-');
  const folder = temp.path;
  // Lines name the client's paths: shown with any control character escaped, as every mkt line.
  const line = (text: string) => {
    if (input.log?.file) appendFileChecked(input.log.file, `${safeText(text)}\n`, 'log_file_unsafe');
    input.log?.stderr?.write(`${safeText(text)}\n`);
  };
  const logging = input.log?.file !== undefined || input.log?.stderr !== undefined;
  try {
    const sandbox = await startSandbox({
      dataDir: folder,
      port: input.port,
      log: logging ? line : undefined,
      notice: line,
      fixtures: input.seed,
      checkAnswers: input.env.MKT_SANDBOX_CHECK_ANSWERS || undefined,
      checkAnswersDocument: input.env.MKT_SANDBOX_CHECK_ANSWERS_DOCUMENT || undefined,
    }).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EADDRINUSE') throw e;
      throw new MktError('port_in_use', `Port ${input.port} on 127.0.0.1 is already in use.`, 1, {
        hints: ['mkt sandbox exec --port 0 -- CMD'],
      });
    });
    try {
      const env: NodeJS.ProcessEnv = {
        ...input.env,
        ...sandboxEnv({ site_url: sandbox.siteUrl, data_dir: folder, seed: sandbox.seed }),
      };
      // A token for another site must not follow the suite to this one.
      delete env.MKT_ACCESS_TOKEN;
      return await run(input.command, input.args, env);
    } finally {
      await sandbox.close();
    }
  } finally {
    temp.remove();
  }
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    // In mkt's process group, so that a terminal's Ctrl-C and input reach CMD as if run directly (a
    // test runner's watch mode reads the terminal); killed with what it started when mkt exits.
    const started = spawnChild(command, args, { stdio: 'inherit', env, ownGroup: false });
    const child = started.process;
    const forward = (signal: NodeJS.Signals) => () => started.signal(signal);
    const handlers = FORWARDED.map((s) => [s, forward(s)] as const);
    for (const [s, h] of handlers) process.on(s, h);
    const done = () => {
      for (const [s, h] of handlers) process.off(s, h);
    };
    child.once('error', (e: NodeJS.ErrnoException) => {
      done();
      reject(
        e.code === 'ENOENT'
          ? new MktError('command_not_found', `Cannot run "${command}": no such command.`, 127)
          : new MktError('command_failed', `Cannot run "${command}": ${e.message}`, 126),
      );
    });
    child.once('exit', (code, signal) => {
      done();
      resolve(signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1));
    });
  });
}
