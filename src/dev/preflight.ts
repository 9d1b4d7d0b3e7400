// What the app of a project needs before `mkt dev` starts it, checked once: its interpreter on PATH
// and of a version that runs it, and its dependencies installed. A start that cannot succeed is
// refused with the one fix, instead of being started again and again.
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { MktError } from '../errors.js';
import { spawnChild } from '../platform/processes.js';
import { INSTALL, type ProjectFile } from '../init/project.js';

/** The oldest Node the Node template runs on (process.loadEnvFile, node --watch). */
export const NODE_TEMPLATE_MIN = [20, 12] as const;

/** The full path of `command` on PATH, or undefined. */
export function onPath(command: string, env: Record<string, string | undefined>): string | undefined {
  if (command.includes('/')) return existsSync(command) ? command : undefined;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, command);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** What a short check command printed, or the error that ended it (at most 10 s). */
function output(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ ok: boolean; text: string }> {
  return new Promise((resolve) => {
    const child = spawnChild(file, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    const keep = (chunk: Buffer) => {
      if (text.length < 4096) text += chunk.toString('utf8').slice(0, 4096 - text.length);
    };
    child.process.stdout!.on('data', keep);
    child.process.stderr!.on('data', keep);
    const timer = setTimeout(() => void child.stop(1_000), 10_000);
    child.process.once('error', () => (clearTimeout(timer), resolve({ ok: false, text: '' })));
    child.process.once(
      'close',
      (code) => (clearTimeout(timer), resolve({ ok: code === 0, text: text.trim() })),
    );
  });
}

const refuse = (message: string, hints: string[]) => new MktError('app_cannot_start', message, 1, { hints });

/**
 * The command that runs the project's app, once what it needs is there: for the Python template the
 * project's .venv interpreter when there is one. Throws the one fix otherwise.
 */
export async function checkApp(
  dir: string,
  project: Partial<ProjectFile>,
  command: string[],
  env: NodeJS.ProcessEnv,
): Promise<string[]> {
  if (project.template === 'node') return checkNode(dir, command, env);
  if (project.template === 'python') return checkPython(dir, command, env);
  return command;
}

async function checkNode(dir: string, command: string[], env: NodeJS.ProcessEnv): Promise<string[]> {
  const node = onPath('node', env);
  if (!node)
    throw refuse('This app runs on Node.js, and there is no `node` on PATH.', [
      'Install Node.js 20.12 or later (https://nodejs.org), then run mkt dev again.',
    ]);
  const version = await output(node, ['-p', 'process.versions.node'], env, dir);
  const [major = 0, minor = 0] = version.text.split('.').map(Number);
  const [wantMajor, wantMinor] = NODE_TEMPLATE_MIN;
  if (!version.ok || major < wantMajor || (major === wantMajor && minor < wantMinor))
    throw refuse(
      `This app needs Node.js ${wantMajor}.${wantMinor} or later; \`node\` on PATH (${node}) is ${version.ok ? version.text : 'not runnable'}.`,
      [
        'Install Node.js 20.12 or later (https://nodejs.org) and put it first on PATH, then run mkt dev again.',
      ],
    );
  const missing = missingDependencies(dir);
  if (missing.length > 0) {
    const npm = onPath('npm', env);
    throw refuse(
      `The app's dependencies are not installed (${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''} missing from node_modules).`,
      npm
        ? ['npm install']
        : ['npm is not on PATH: install Node.js with npm (https://nodejs.org), then: npm install'],
    );
  }
  return command;
}

/** The package.json dependencies with no folder in node_modules. */
function missingDependencies(dir: string): string[] {
  let deps: Record<string, string> = {};
  try {
    deps =
      (
        JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
          dependencies?: Record<string, string>;
        }
      ).dependencies ?? {};
  } catch {
    return [];
  }
  return Object.keys(deps).filter((name) => !existsSync(join(dir, 'node_modules', name, 'package.json')));
}

async function checkPython(dir: string, command: string[], env: NodeJS.ProcessEnv): Promise<string[]> {
  const venv = join(dir, '.venv', 'bin', 'python3');
  const [head, ...rest] = command;
  const python = head === 'python3' && existsSync(venv) ? venv : onPath(head ?? 'python3', env);
  if (!python)
    throw refuse(`This app runs on Python 3, and there is no \`${head}\` on PATH.`, [
      "Install Python 3 (https://www.python.org, or your system's python3 package), then run mkt dev again.",
    ]);
  const check = await output(python, ['-c', 'import flask, jwt'], env, dir);
  if (!check.ok)
    throw refuse(`The app's dependencies (Flask, PyJWT) are not installed for ${python}.`, [INSTALL.python]);
  return [python, ...rest];
}
