import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { copyFile, mkdir, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MKT_BIN, baseEnv, tempDir } from '../support/cli.js';
import { typeInTerminal } from '../support/terminal.js';

// Getting started on a machine whose Node is 20 (issue 36): after `npm ci && npm run build && npm
// link`, `mkt` is started by the system's Node 20. In a checkout it runs itself again on the
// project's own Node (node_modules/node); elsewhere it refuses with the line that works from there.
// Run with the real Node 20, as the registry ships it (test/package/node-versions), else the system's.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NODE20 = [join(ROOT, 'test/package/node-versions/node_modules/node20/bin/node'), '/usr/bin/node'].find(
  (node) => existsSync(node) && /^v20\./.test(execFileSync(node, ['--version'], { encoding: 'utf8' })),
);
const OWN_NODE = realpathSync(join(ROOT, 'node_modules/node/bin/node'));
const OWN_VERSION = (
  JSON.parse(readFileSync(join(ROOT, 'node_modules/node/package.json'), 'utf8')) as { version: string }
).version;

let home: { path: string; remove(): Promise<void> };
beforeAll(async () => {
  if (!NODE20)
    throw new Error(
      'No Node 20 here: run `npm ci --prefix test/package/node-versions` (scripts/test-everything.sh does).',
    );
  home = await tempDir('mkt-old-node-');
});
afterAll(() => home?.remove());

/** `mkt ARGS` started by Node 20 from `bin` (this checkout's by default), stdio piped. */
function onNode20(args: string[], options: { bin?: string; env?: Record<string, string> } = {}) {
  const child = spawn(NODE20!, [options.bin ?? MKT_BIN, ...args], {
    cwd: home.path,
    env: { ...baseEnv(join(home.path, 'config')), ...options.env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
  }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  /** Resolves with the first JSON document on stdout (the sandbox's), or rejects when mkt ends first. */
  const document = () =>
    new Promise<{ site_url: string }>((resolve, reject) => {
      const check = () => {
        try {
          resolve(JSON.parse(stdout) as { site_url: string });
        } catch {
          // not complete yet
        }
      };
      child.stdout.on('data', check);
      void done.then((r) => reject(new Error(`mkt ended (${r.code}) first: ${r.stderr}`)));
    });
  return { child, done, document };
}

/** The process ids of `pid`'s children (Linux). */
function childrenOf(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
}

describe('in a checkout, on Node 20', () => {
  it('./bin/run.js runs on the project’s own Node: the version, the data and the exit code', async () => {
    const version = await onNode20(['--version']).done;
    expect(version).toMatchObject({ code: 0, stderr: '' });
    expect(version.stdout).toBe(`mkt/0.1.0 ${process.platform}-${process.arch} node-v${OWN_VERSION}\n`);
    const refused = await onNode20(['whoami', '--json']).done;
    expect(refused.code).toBe(4);
    expect(JSON.parse(refused.stdout).error.code).toBe('not_logged_in');
  });

  it('the one child runs the same arguments, nothing added; SIGTERM and SIGINT reach it, and its exit code is passed on', async () => {
    for (const [signal, code] of [
      ['SIGTERM', 143],
      ['SIGINT', 130],
    ] as const) {
      const args = [
        'sandbox',
        'start',
        '--port',
        '0',
        '--json',
        '--data-dir',
        join(home.path, `data-${code}`),
      ];
      const run = onNode20(args);
      const info = await run.document();
      const [child] = childrenOf(run.child.pid!);
      const argv = readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0').slice(0, -1);
      expect(argv).toEqual([OWN_NODE, MKT_BIN, ...args]);
      run.child.kill(signal);
      const end = await run.done;
      expect(end.code, end.stderr).toBe(code);
      expect(end.stderr).toContain('Stopped.');
      await expect(fetch(`${info.site_url}/api/v1/whoami`)).rejects.toThrow(); // nothing left behind
    }
  });

  it('a child that dies of a signal makes the launcher die of the same signal', async () => {
    const run = onNode20([
      'sandbox',
      'start',
      '--port',
      '0',
      '--json',
      '--data-dir',
      join(home.path, 'data-kill'),
    ]);
    await run.document();
    process.kill(childrenOf(run.child.pid!)[0]!, 'SIGKILL');
    expect(await run.done).toMatchObject({ code: null, signal: 'SIGKILL' });
  });

  it('an npm-linked mkt on a terminal: a masked prompt reads the keyboard, Ctrl-C stops the sandbox cleanly (exit 130)', async () => {
    const prefix = join(home.path, 'npm-global');
    await mkdir(join(prefix, 'bin'), { recursive: true });
    await symlink(MKT_BIN, join(prefix, 'bin', 'mkt')); // what `npm link` puts on the PATH
    const env = {
      ...baseEnv(join(home.path, 'config')),
      PATH: `${join(prefix, 'bin')}:${dirname(NODE20!)}:/usr/bin:/bin`,
      TERM: 'dumb',
      NO_COLOR: '1',
    };
    const version = typeInTerminal('node --version; mkt --version', { env, cwd: home.path });
    expect(await version.exit).toBe(0);
    expect(version.screen()).toMatch(
      new RegExp(`^v20\\.[\\s\\S]*node-v${OWN_VERSION.replaceAll('.', '\\.')}`),
    );
    const sandbox = typeInTerminal(`mkt sandbox start --port 0 --data-dir ${join(home.path, 'data-tty')}`, {
      env,
      cwd: home.path,
    });
    await sandbox.waitFor(/Press Ctrl-C to stop\./);
    // The terminal is the child's own: a masked prompt reads what is typed there.
    const site = /Site URL:\s+(\S+)/.exec(sandbox.screen())![1]!;
    const key = /Test key:\s+(test_\S+)/.exec(sandbox.screen())![1]!;
    const login = typeInTerminal(`mkt login --with-api-key --site-url ${site}`, {
      env,
      cwd: home.path,
      answers: [['API key', `${key}\r`]],
    });
    expect(await login.exit, login.screen()).toBe(0);
    expect(login.screen()).not.toContain(key);
    expect(login.screen()).toMatch(/Logged in/);
    sandbox.type('\u0003');
    expect(await sandbox.exit).toBe(130);
    // The sandbox finished stopping: the launcher neither died first nor cut the stop short.
    expect(sandbox.screen()).toMatch(/Stopping the sandbox[^\n]*\n[\s\S]*Stopped\./);
  });
});

describe('without the project’s Node, on Node 20', () => {
  /** bin/ and package.json copied into `dir` (with `more` files), as a layout without node_modules/node. */
  async function layout(dir: string, more: string[] = []): Promise<string> {
    for (const file of ['bin/run.js', 'bin/old-node.js', 'bin/package.json', 'package.json', ...more]) {
      await mkdir(dirname(join(dir, file)), { recursive: true });
      await copyFile(join(ROOT, file), join(dir, file));
    }
    return join(dir, 'bin/run.js');
  }

  it('an installed package says so, with the npx line that runs it on Node 22', async () => {
    const bin = await layout(join(home.path, 'prefix/lib/node_modules/mkt'));
    const refused = await onNode20(['whoami', '--json'], { bin }).done;
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toBe(
      `mkt needs Node.js 22.13 or newer; this is Node.js ${execFileSync(NODE20!, ['--version'], { encoding: 'utf8' }).trim()}.\n` +
        `  Try: npx -y node@22 ${bin} whoami --json\n` +
        '  Or install Node.js 22 or 24 (https://nodejs.org/, or `nvm install 22`) and run mkt again.\n',
    );
  });

  it('a checkout before npm ci says to run it there', async () => {
    const dir = join(home.path, 'fresh-clone');
    const bin = await layout(dir, ['package-lock.json', 'src/boot.ts']);
    const refused = await onNode20(['--version'], { bin }).done;
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`  Try: cd ${dir} && npm ci && npm run build\n`);
  });
});
