import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runMkt, startMkt, tempDir, type RunningMkt } from '../support/cli.js';

// `mkt sandbox exec` around a command, and the separate steps (start --detach, status, env, stop,
// export) for runners that need them: real processes, real signals.

let dir: { path: string; remove(): Promise<void> };
const started: RunningMkt[] = [];
beforeAll(async () => {
  dir = await tempDir();
});
afterEach(() => {
  for (const m of started.splice(0)) m.child.kill('SIGKILL');
});
afterAll(async () => {
  await runMkt(['sandbox', 'stop', '--data-dir', join(dir.path, 'bg')], dir.path);
  await dir.remove();
});

const NAMES = [
  'MKT_SITE_URL',
  'MKT_API_KEY',
  'MKT_APP_ID',
  'MKT_CLIENT_ID',
  'MKT_CLIENT_SECRET',
  'MKT_WEBHOOK_SECRET',
  'MKT_TEST_USER_IDS',
  'MKT_DEVELOPER_ID',
  'MKT_SANDBOX_DATA_DIR',
];
/** A node one-liner: the MKT_ variables and what the sandbox answers to GET /whoami with the key. */
const PROBE = `const e = process.env;
fetch(e.MKT_SITE_URL + '/api/v1/whoami', { headers: { 'x-api-key': e.MKT_API_KEY } })
  .then((r) => r.json())
  .then((me) => console.log(JSON.stringify({ env: Object.fromEntries(Object.entries(e).filter(([k]) => k.startsWith('MKT_'))), me, argv: process.argv.slice(1) })));`;

describe('mkt sandbox exec', () => {
  it('runs the command with the documented environment against a fresh sandbox, quietly, then removes it', async () => {
    const run = await runMkt(
      ['sandbox', 'exec', '--', process.execPath, '-e', PROBE, 'a b', '--flag'],
      dir.path,
      {
        env: { MKT_ACCESS_TOKEN: 'at_from_elsewhere' },
      },
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as { env: Record<string, string>; me: { id: string }; argv: string[] };
    expect(
      Object.keys(out.env)
        .filter((k) => NAMES.includes(k))
        .sort(),
    ).toEqual([...NAMES].sort());
    expect(out.env.MKT_ACCESS_TOKEN).toBeUndefined();
    expect(out.me.id).toBe(out.env.MKT_DEVELOPER_ID);
    expect(out.env.MKT_TEST_USER_IDS!.split(' ')).toHaveLength(3);
    expect(out.argv).toEqual(['a b', '--flag']);
    expect(existsSync(out.env.MKT_SANDBOX_DATA_DIR!)).toBe(false);
    // The documented names are in --help.
    const help = await runMkt(['sandbox', 'exec', '--help'], dir.path);
    for (const name of NAMES) expect(help.stdout).toContain(name);
  });

  it("exits with the command's code, 128+n for a signal, 127 for no such command, 2 for none", async () => {
    const code = await runMkt(['sandbox', 'exec', '--', 'sh', '-c', 'exit 7'], dir.path);
    expect(code.code).toBe(7);
    const killed = await runMkt(['sandbox', 'exec', '--', 'sh', '-c', 'kill -KILL $$'], dir.path);
    expect(killed.code).toBe(137);
    const missing = await runMkt(['sandbox', 'exec', '--', 'no-such-command-here'], dir.path);
    expect(missing.code).toBe(127);
    expect(missing.stderr).toMatch(/no-such-command-here/);
    const none = await runMkt(['sandbox', 'exec'], dir.path);
    expect(none.code).toBe(2);
  });

  it('passes SIGTERM on to the command and waits for it', async () => {
    const script = 'trap "echo got-term; exit 5" TERM; echo ready; while :; do sleep 0.05; done';
    const mkt = startMkt(['sandbox', 'exec', '--', 'sh', '-c', script], dir.path);
    started.push(mkt);
    await mkt.waitFor((lines) => lines.some((l) => l.text === 'ready'));
    mkt.child.kill('SIGTERM');
    expect((await mkt.exit()).code).toBe(5);
    expect(mkt.stdout()).toBe('ready\ngot-term\n');
  });

  it("shows the sandbox's request log only when asked (--verbose on stderr, --log-file)", async () => {
    const log = join(dir.path, 'sandbox.log');
    const run = await runMkt(
      ['sandbox', 'exec', '--verbose', '--log-file', log, '--', process.execPath, '-e', PROBE],
      dir.path,
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/GET \/api\/v1\/whoami 200/);
    expect(await readFile(log, 'utf8')).toMatch(/GET \/api\/v1\/whoami 200/);
    expect(JSON.parse(run.stdout)).toHaveProperty('me');
  });

  it('refuses a bad fixtures file with its line and field before anything starts (exit 2)', async () => {
    const file = join(dir.path, 'bad.json');
    await writeFile(
      file,
      '{\n  "apps": [\n    {\n      "name": "A",\n      "plans": [{ "id": "p", "name": "P", "kind": "weekly" }]\n    }\n  ]\n}\n',
    );
    const marker = join(dir.path, 'ran');
    const run = await runMkt(['sandbox', 'exec', '--seed', file, '--', 'touch', marker], dir.path);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `${file}:5: field "apps[0].plans[0].kind" must be one of: free, monthly, annual, one_time.`,
    );
    expect(existsSync(marker)).toBe(false);
  });
});

describe('start --detach, status, env, stop and export', () => {
  it('runs in the background until stopped, and its state replays from the exported file', async () => {
    const data = join(dir.path, 'bg');
    const start = await runMkt(['sandbox', 'start', '--detach', '--port', '0', '--data-dir', data], dir.path);
    expect(start.code).toBe(0);
    const info = JSON.parse(start.stdout) as { pid: number; site_url: string; env: Record<string, string> };
    expect(Object.keys(info.env).sort()).toEqual([...NAMES].sort());
    expect(statSync(join(data, 'running.json')).mode & 0o777).toBe(0o600);
    const twice = await runMkt(['sandbox', 'start', '--detach', '--port', '0', '--data-dir', data], dir.path);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain(`already running on ${data} at ${info.site_url}`);
    const status = await runMkt(['sandbox', 'status', '--json', '--data-dir', data], dir.path);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      running: true,
      pid: info.pid,
      site_url: info.site_url,
    });

    // The export lines give the same values back through a shell.
    const env = await runMkt(['sandbox', 'env', '--data-dir', data], dir.path);
    expect(env.code).toBe(0);
    const shell = spawnSync(
      'sh',
      ['-c', 'eval "$(cat)"; printf "%s|%s" "$MKT_TEST_USER_IDS" "$MKT_CLIENT_SECRET"'],
      {
        input: env.stdout,
        encoding: 'utf8',
      },
    );
    expect(shell.stdout).toBe(`${info.env.MKT_TEST_USER_IDS}|${info.env.MKT_CLIENT_SECRET}`);

    // A state reached by hand: a new test user on a trial.
    const made = await fetch(`${info.site_url}/api/v1/simulator/users`, {
      method: 'POST',
      headers: { 'x-api-key': info.env.MKT_API_KEY!, 'content-type': 'application/json' },
      body: JSON.stringify({
        app_id: info.env.MKT_APP_ID,
        plan: 'pro-monthly',
        trial_days: 10,
        name: 'Tess Trial',
      }),
    });
    expect(made.status).toBe(201);
    const tess = (await made.json()) as { id: string };

    // A running sandbox exports a consistent snapshot of its database.
    const running = await runMkt(['sandbox', 'export', '--data-dir', data], dir.path);
    expect(running.code, running.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(running.stdout))).toContain(tess.id);
    const stop = await runMkt(['sandbox', 'stop', '--data-dir', data], dir.path);
    expect(stop.code).toBe(0);
    expect(existsSync(join(data, 'running.json'))).toBe(false);
    const after = await runMkt(['sandbox', 'status', '--data-dir', data], dir.path);
    expect(after.code).toBe(3);
    expect((await runMkt(['sandbox', 'stop', '--data-dir', data], dir.path)).code).toBe(0);

    const file = join(dir.path, 'state.json');
    const exported = await runMkt(['sandbox', 'export', '--data-dir', data, '--output', file], dir.path);
    expect(exported.code).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // A fixtures file never replaces a state by mistake: only with --reset.
    const over = await runMkt(
      ['sandbox', 'start', '--seed', file, '--port', '0', '--data-dir', data],
      dir.path,
    );
    expect(over.code).toBe(1);
    expect(over.stderr).toMatch(/already holds a sandbox's state; --seed replaces it only with --reset/);
    const replay = `fetch(process.env.MKT_SITE_URL + '/api/v1/simulator/users/${tess.id}?app_id=' + process.env.MKT_APP_ID, { headers: { 'x-api-key': process.env.MKT_API_KEY } }).then((r) => r.json()).then((u) => console.log(JSON.stringify({ u, secret: process.env.MKT_CLIENT_SECRET })))`;
    const again = await runMkt(
      ['sandbox', 'exec', '--seed', file, '--', process.execPath, '-e', replay],
      dir.path,
    );
    expect(again.stderr).toBe('');
    const { u, secret } = JSON.parse(again.stdout) as { u: Record<string, unknown>; secret: string };
    expect(secret).toBe(info.env.MKT_CLIENT_SECRET);
    expect(u).toMatchObject({ id: tess.id, name: 'Tess Trial', plan: 'pro-monthly', status: 'trialing' });
  }, 90_000);
});
