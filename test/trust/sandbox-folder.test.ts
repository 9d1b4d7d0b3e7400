// The sandbox's data folder and its files by the folder and files doors (src/platform): a folder of
// another user is refused as the config folder is (it could plant links for the log, lock and running
// files); a link planted as sandbox.log, sandbox.lock or running.json is never followed; `sandbox stop`
// signals only the process that wrote running.json (its start time), never a stranger whose command
// line says "sandbox"; a file in the folder's place or a newer schema is said in words, not "internal".
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runMkt, tempDir } from '../support/cli.js';

let dir: { path: string; remove(): Promise<void> };
const strangers: ChildProcess[] = [];
beforeAll(async () => {
  dir = await tempDir();
});
afterEach(() => {
  for (const s of strangers.splice(0)) s.kill('SIGKILL');
});
afterAll(async () => dir.remove());

let n = 0;
const folder = () => join(dir.path, `data-${++n}`);
const start = (data: string, ...extra: string[]) =>
  runMkt(['sandbox', 'start', '--port', '0', '--data-dir', data, ...extra], dir.path, { timeoutMs: 30_000 });

const asRoot = process.getuid?.() === 0;

describe("the sandbox's data folder", () => {
  it.runIf(asRoot)(
    'refuses a folder another user made first (0755), in the foreground and with --detach',
    async () => {
      const data = folder();
      await mkdir(data, { mode: 0o755 });
      await chown(data, 12345, 12345);
      for (const extra of [[], ['--detach']]) {
        const r = await start(data, ...extra);
        expect(r.code, r.stderr).toBe(1);
        expect(r.stderr).toContain(`The sandbox data folder ${data} belongs to another user (uid 12345)`);
        expect(r.stderr).not.toContain('Internal error');
      }
      // Nothing was made in it: no log, lock or database of ours for them to read or redirect.
      const { readdir } = await import('node:fs/promises');
      expect(await readdir(data)).toEqual([]);
    },
  );

  it('never appends the log through a link planted as sandbox.log (start --detach)', async () => {
    const data = folder();
    await mkdir(data, { mode: 0o700 });
    const bashrc = join(dir.path, 'bashrc');
    await writeFile(bashrc, '# mine\n');
    await symlink(bashrc, join(data, 'sandbox.log'));
    const r = await start(data, '--detach');
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain('sandbox.log is a symbolic link');
    expect(await readFile(bashrc, 'utf8')).toBe('# mine\n');
    await runMkt(['sandbox', 'stop', '--data-dir', data], dir.path);
  });

  it('never creates the target of a link planted as sandbox.lock', async () => {
    const data = folder();
    await mkdir(data, { mode: 0o700 });
    const target = join(dir.path, 'made-through-the-lock');
    await symlink(target, join(data, 'sandbox.lock'));
    const r = await start(data);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain('sandbox.lock is a symbolic link');
    expect(existsSync(target)).toBe(false);
  });

  it('tightens a folder of ours that others may write (0777) to 0700, saying so', async () => {
    const data = folder();
    await mkdir(data);
    await chmod(data, 0o777);
    const r = await start(data, '--detach');
    try {
      expect(r.code, r.stderr).toBe(0);
      expect((await stat(data)).mode & 0o777).toBe(0o700);
    } finally {
      await runMkt(['sandbox', 'stop', '--data-dir', data], dir.path);
    }
  });

  it('says a file in the folder’s place is not a folder (not a bug in mkt)', async () => {
    const data = join(dir.path, 'a-file');
    await writeFile(data, 'not a folder\n');
    const r = await start(data);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`The sandbox data folder ${data} is not a folder`);
    expect(r.stderr).not.toContain('Internal error');
  });

  it('says a database of a newer schema comes from a newer mkt (not a bug), leaving its data as it is', async () => {
    const data = folder();
    await mkdir(data, { mode: 0o700 });
    const db = new DatabaseSync(join(data, 'sandbox.sqlite'));
    db.exec('PRAGMA user_version = 999');
    db.close();
    const r = await start(data);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/is from a newer mkt \(schema 999/);
    expect(r.stderr).not.toContain('Internal error');
    const after = new DatabaseSync(join(data, 'sandbox.sqlite'), { readOnly: true });
    expect(after.prepare('PRAGMA user_version').get()).toEqual({ user_version: 999 });
    after.close();
  });
});

describe('mkt sandbox stop', () => {
  /** A process that is not the sandbox, whose command line says "sandbox" (as a browser's --no-sandbox). */
  async function stranger(): Promise<ChildProcess> {
    const child = spawn(
      process.execPath,
      ['-e', 'setInterval(() => {}, 1000)', '--', '--no-sandbox', '--data-dir=./sandbox-data'],
      {
        stdio: 'ignore',
      },
    );
    strangers.push(child);
    await new Promise((r) => setTimeout(r, 200));
    return child;
  }
  const record = (data: string, pid: number) =>
    JSON.stringify({
      pid,
      port: 1,
      site_url: 'http://127.0.0.1:1',
      data_dir: data,
      started_at: new Date(Date.now() - 3600_000).toISOString(),
      seed: { app: {}, users: [], developer: {} },
    });

  it('with a stale running.json whose pid is now a stranger: signals nothing, the stranger lives on', async () => {
    const data = folder();
    await mkdir(data, { mode: 0o700 });
    const s = await stranger();
    await writeFile(join(data, 'running.json'), record(data, s.pid!), { mode: 0o600 });
    const r = await runMkt(['sandbox', 'stop', '--data-dir', data], dir.path);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('Stopped the sandbox');
    await new Promise((res) => setTimeout(res, 300));
    expect(s.exitCode).toBeNull();
    expect(s.signalCode).toBeNull();
  });

  it('never reads running.json through a link (the stranger it names lives on)', async () => {
    const data = folder();
    await mkdir(data, { mode: 0o700 });
    const s = await stranger();
    const planted = join(dir.path, `planted-${n}.json`);
    await writeFile(planted, record(data, s.pid!));
    await symlink(planted, join(data, 'running.json'));
    const r = await runMkt(['sandbox', 'stop', '--data-dir', data], dir.path);
    expect(r.code, r.stderr).toBe(0);
    await new Promise((res) => setTimeout(res, 300));
    expect(s.exitCode).toBeNull();
    expect(s.signalCode).toBeNull();
  });
});
