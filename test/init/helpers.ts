// What the tests of `mkt init` and `mkt dev` share: the runtimes a user's app runs on, and running a
// command without blocking the test process (the sandbox answers from it).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Debian's own programs (its Python with python3-flask and python3-jwt, Node 20 as the system's). */
export const SYSTEM_BIN = '/usr/bin';
const versions = fileURLToPath(new URL('../package/node-versions/node_modules/', import.meta.url));

/** The folder holding `node` of a major version: 20 is the system's; 22 and 24 from test/package/node-versions. */
export function nodeBin(major: 20 | 22 | 24 | number): string {
  if (major === 20) return SYSTEM_BIN;
  const bin = `${versions}node${major}/bin`;
  if (!existsSync(`${bin}/node`))
    throw new Error(`Node ${major} is missing: npm ci --prefix test/package/node-versions`);
  return bin;
}

/** PATH with `first` in front and no folder that holds the project's own Node (node_modules/.bin). */
export function pathWith(first: string): string {
  const rest = (process.env.PATH ?? '').split(':').filter((d) => d && !d.includes('node_modules'));
  return [first, ...rest].join(':');
}

export const hasFlask =
  spawnSync('python3', ['-c', 'import flask, jwt'], { env: { ...process.env, PATH: pathWith(SYSTEM_BIN) } })
    .status === 0;

/** libfaketime, for a process that should see another time (FAKETIME=+6m). */
export const FAKETIME_LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

/** Runs a command without blocking this process. */
export function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }) {
  return new Promise<{ status: number | null; output: string }>((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, output }));
  });
}
