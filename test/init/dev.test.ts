// `mkt dev` around an app: a start that cannot succeed is said once (what the app needs, the one
// fix), not restarted forever; an early exit starts again on a change; one mkt dev per app; the
// app's output cannot grow mkt dev's memory (one endless line, a paused reader); and what it started
// goes with it.
import { spawn, spawnSync } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseEnv, MKT_BIN, runMkt, startMkt, tempDir } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';
import { freePort } from '../support/server.js';
import { nodeBin } from './helpers.js';

/** The most memory (KiB) process `pid` has held, from /proc. */
const peakKiB = (pid: number) =>
  Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);

describe('mkt dev', () => {
  const ctx = useSandbox();

  it('an app that exits at once is started again when a file changes, not in a loop; mkt credentials stay out', async () => {
    const folder = await tempDir();
    const port = await freePort();
    const dev = startMkt(
      ['dev', '--command', 'echo "up $PORT key=${MKT_API_KEY:-none}"; exit 3', '--port', String(port)],
      ctx.dir,
      {
        env: ctx.env,
        cwd: folder.path,
      },
    );
    await dev.waitFor(
      () => dev.stdout().includes('it starts again when a file of the project changes.'),
      15_000,
    );
    expect(dev.stdout()).toContain(`app      | up ${port} key=none`);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(dev.stdout().match(/up \d+/g)).toHaveLength(1);
    await writeFile(join(folder.path, 'app.sh'), 'edited');
    await dev.waitFor(() => (dev.stdout().match(/up \d+/g) ?? []).length === 2, 10_000);
    expect(dev.stdout()).toContain('app      | app.sh changed: starting it again.');
    dev.child.kill('SIGINT');
    expect((await dev.exit()).code).toBe(130);
    await folder.remove();
  });

  it('a second mkt dev for the app names the running one; SIGTERM stops the app with it', async () => {
    const folder = await tempDir();
    const port = await freePort();
    const first = startMkt(['dev', '--command', `sleep 30.${port}`, '--port', String(port)], ctx.dir, {
      env: ctx.env,
      cwd: folder.path,
    });
    await first.waitForStderr((s) => s.includes('Ctrl-C stops'), 15_000);
    const second = await runMkt(['dev', '--command', 'sleep 1', '--port', String(port)], ctx.dir, {
      env: ctx.env,
      cwd: folder.path,
    });
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(
      new RegExp(
        `mkt dev already runs for app_\\w+ \\(pid ${first.child.pid}, in ${folder.path}, the app on http://localhost:${port}\\)`,
      ),
    );
    first.child.kill('SIGTERM');
    expect((await first.exit()).code).toBe(143);
    await expect
      .poll(() => spawnSync('pgrep', ['-f', `sleep 30.${port}`]).stdout.toString(), { timeout: 5_000 })
      .toBe('');
    await folder.remove();
  });

  it('after kill -9, the next mkt dev ends what the killed one left running, and no stranger', async () => {
    const folder = await tempDir();
    const port = await freePort();
    const first = startMkt(['dev', '--command', `sleep 40.${port}`, '--port', String(port)], ctx.dir, {
      env: ctx.env,
      cwd: folder.path,
    });
    await first.waitForStderr((s) => s.includes('Ctrl-C stops'), 15_000);
    const pgrep = () =>
      spawnSync('pgrep', ['-f', `^sleep 40.${port}$`])
        .stdout.toString()
        .trim();
    await expect.poll(pgrep, { timeout: 5_000 }).not.toBe('');
    const left = pgrep();
    first.child.kill('SIGKILL');
    await first.exit();
    expect(pgrep()).toBe(left); // killed outright: its app runs on
    // A stranger (a process mkt did not start, as a reused pid would be) recorded beside it: never signalled.
    const stranger = spawn('sleep', ['41'], { stdio: 'ignore' });
    const state = join(ctx.dir, 'data', 'dev');
    const file = spawnSync('sh', ['-c', `ls ${state}/*.running.json`])
      .stdout.toString()
      .trim();
    const recorded = JSON.parse(readFileSync(file, 'utf8')) as Record<string, { pid: number; start: string }>;
    recorded.stranger = { pid: stranger.pid!, start: '1' };
    await writeFile(file, JSON.stringify(recorded));
    try {
      const second = startMkt(['dev', '--command', `sleep 42.${port}`, '--port', String(port)], ctx.dir, {
        env: ctx.env,
        cwd: folder.path,
      });
      await second.waitForStderr((s) => s.includes('Ctrl-C stops'), 15_000);
      expect(second.stderr()).toMatch(/Stopped the app a previous mkt dev left running \(pid \d+\)/);
      expect(second.stderr()).not.toMatch(/Stopped the stranger/);
      await expect.poll(pgrep, { timeout: 5_000 }).toBe('');
      expect(stranger.exitCode).toBeNull();
      second.child.kill('SIGINT');
      expect((await second.exit()).code).toBe(130);
    } finally {
      stranger.kill();
    }
    await folder.remove();
  });

  it('a Node project before npm install (or with no npm) says the one fix and starts nothing (exit 1)', async () => {
    const folder = await tempDir();
    const port = await freePort();
    await writeFile(
      join(folder.path, 'mkt.json'),
      JSON.stringify({
        app_id: ctx.sandbox.seed.app.id,
        template: 'node',
        port,
        command: ['node', '--watch', 'src/server.js'],
      }),
    );
    await writeFile(
      join(folder.path, 'package.json'),
      JSON.stringify({ dependencies: { hono: '4.13.19', jose: '6.2.17' } }),
    );
    const withNpm = await runMkt(['dev'], ctx.dir, {
      env: { ...ctx.env, PATH: `${nodeBin(20)}:/bin` },
      cwd: folder.path,
    });
    expect(withNpm.code).toBe(1);
    expect(withNpm.stderr).toContain(
      "The app's dependencies are not installed (hono, jose missing from node_modules).",
    );
    expect(withNpm.stderr).toMatch(/npm install/);
    expect(withNpm.stderr.match(/not installed/g)).toHaveLength(1);
    // Only `node` on PATH, no npm.
    const bin = join(folder.path, 'bin');
    await mkdir(bin);
    await symlink(join(nodeBin(20), 'node'), join(bin, 'node'));
    const noNpm = await runMkt(['dev'], ctx.dir, { env: { ...ctx.env, PATH: bin }, cwd: folder.path });
    expect(noNpm.code).toBe(1);
    expect(noNpm.stderr).toContain('npm is not on PATH: install Node.js with npm');
    const noNode = await runMkt(['dev'], ctx.dir, {
      env: { ...ctx.env, PATH: join(folder.path, 'none') },
      cwd: folder.path,
    });
    expect(noNode.code).toBe(1);
    expect(noNode.stderr).toContain('This app runs on Node.js, and there is no `node` on PATH.');
    await folder.remove();
  });

  it("one endless line, or a chatty app while mkt dev's stdout is not read, keeps mkt dev's memory bounded", async () => {
    const folder = await tempDir();
    const start = (command: string, stdout: 'pipe' | number) =>
      spawn(
        process.execPath,
        [MKT_BIN, 'dev', '--command', command, '--port', String(0 | (40_000 + Math.random() * 20_000))],
        {
          env: { ...baseEnv(ctx.dir), ...ctx.env } as NodeJS.ProcessEnv,
          cwd: folder.path,
          stdio: ['ignore', stdout, 'ignore'],
        },
      );
    const cases: Array<[string, () => ReturnType<typeof start>]> = [
      // 400 MB without a newline (once held whole: ~600 MB, then "Invalid string length").
      [
        'one endless line',
        () => start("head -c 400000000 /dev/zero | tr '\\0' x; sleep 30", openSync('/dev/null', 'w')),
      ],
      // A chatty app while nobody reads mkt dev's output (once 2.88 GB in 15 s).
      ['a paused reader', () => start('yes "a chatty line of output"', 'pipe')],
    ];
    for (const [what, make] of cases) {
      const child = make();
      child.stdout?.pause();
      await new Promise((r) => setTimeout(r, 6_000));
      expect(child.exitCode, what).toBe(null);
      expect(peakKiB(child.pid!), what).toBeLessThan(250_000);
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGINT');
      child.stdout?.resume();
      await exited;
    }
    await folder.remove();
  }, 30_000);
});
