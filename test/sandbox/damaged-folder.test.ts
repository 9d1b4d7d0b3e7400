import { createHash, randomBytes } from 'node:crypto';
import { cp, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runMkt, tempDir } from '../support/cli.js';
import { killAllSandboxProcesses, startSandboxProcess, startTestSandbox } from '../support/sandbox.js';

// A damaged or foreign data folder is refused in one sentence that names the file and what is wrong,
// says nothing was changed and gives the two ways on (another --data-dir, or --reset, which first
// keeps a copy); the folder is left byte for byte as it was. A start that cannot take its port makes
// no database.

let dir: { path: string; remove(): Promise<void> };
/** A data folder a sandbox made and closed: the good state each case damages a copy of. */
let good: string;
beforeAll(async () => {
  dir = await tempDir();
  good = join(dir.path, 'good');
  const sb = await startTestSandbox({ dataDir: good });
  await sb.close();
});
afterAll(async () => {
  await dir.remove();
});
afterEach(() => killAllSandboxProcesses());

/** Every file of a folder (recursively) with a hash of its bytes, to see that nothing changed. */
async function snapshot(folder: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(folder, { recursive: true })).sort()) {
    const path = join(folder, name);
    const s = await stat(path);
    if (s.isFile())
      out[name] = `${s.mode.toString(8)} ${createHash('sha256')
        .update(await readFile(path))
        .digest('hex')}`;
  }
  return out;
}

let n = 0;
/** A copy of the good folder, damaged by `damage`. */
async function damaged(damage: (folder: string, db: string) => Promise<void> | void): Promise<string> {
  const folder = join(dir.path, `case-${++n}`);
  await cp(good, folder, { recursive: true });
  await damage(folder, join(folder, 'sandbox.sqlite'));
  return folder;
}

const withDb = (path: string, sql: string) => {
  const db = new DatabaseSync(path);
  db.exec(sql);
  db.close();
};

const CASES: Array<[string, (folder: string, db: string) => Promise<void> | void, RegExp]> = [
  ['random bytes as the database', (_f, db) => writeFile(db, randomBytes(8192)), /is not a SQLite database/],
  ['a dropped table', (_f, db) => withDb(db, 'DROP TABLE payments'), /has lost its table "payments"/],
  [
    'bad JSON in a row',
    (_f, db) => withDb(db, `UPDATE apps SET redirect_uris = '["http://x' `),
    /has a row of "apps" \(rowid \d+\) whose redirect_uris is not valid JSON/,
  ],
  [
    'a symlinked database file',
    async (folder, db) => {
      const elsewhere = join(folder, '..', `elsewhere-${n}.sqlite`);
      await cp(db, elsewhere);
      await rm(db);
      await symlink(elsewhere, db);
    },
    /is a symbolic link, not the plain file the sandbox keeps/,
  ],
  [
    "another program's database",
    async (folder, db) => {
      await rm(folder, { recursive: true });
      await mkdir(folder, { mode: 0o700 });
      withDb(
        db,
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('mine')",
      );
    },
    /is a SQLite database of another program/,
  ],
];

describe('a damaged or foreign data folder', () => {
  it.each(CASES)('%s: refused in one sentence, nothing changed', async (_name, damage, problem) => {
    const folder = await damaged(damage);
    const before = await snapshot(folder);
    const r = await runMkt(['sandbox', 'start', '--port', '0', '--data-dir', folder], dir.path);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(problem);
    const message = r.stderr.trim();
    expect(message).toContain(join(folder, 'sandbox.sqlite'));
    expect(message).toContain('nothing was changed');
    expect(message).toMatch(/another --data-dir, or with --reset \(which first keeps a copy/);
    expect(message).not.toMatch(/internal/i);
    // One sentence: a single full stop, at the end.
    expect(message.replace(/^Error: /, '').match(/\.(\s|$)/g)).toHaveLength(1);
    expect(await snapshot(folder)).toEqual(before);
    const json = await runMkt(['sandbox', 'start', '--json', '--port', '0', '--data-dir', folder], dir.path);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout || json.stderr).error.code).toBe('data_damaged');
  });

  it('--reset keeps the damaged files in a folder of their own and starts afresh', async () => {
    const folder = await damaged((_f, db) => writeFile(db, randomBytes(4096)));
    const bytes = await readFile(join(folder, 'sandbox.sqlite'));
    const sb = await startSandboxProcess(folder, dir.path, { args: ['--reset'] });
    expect(sb.stderr()).toMatch(/Reset: the earlier files of .* are kept in .*before-reset-/);
    const kept = (await readdir(folder)).filter((name) => name.startsWith('before-reset-'));
    expect(kept).toHaveLength(1);
    expect(await readFile(join(folder, kept[0]!, 'sandbox.sqlite'))).toEqual(bytes);
    const whoami = await fetch(`${sb.siteUrl}/api/v1/whoami`, { headers: { 'x-api-key': sb.seed.test_key } });
    expect(whoami.status).toBe(200);
    await sb.kill9();
  });
});

describe('a start that cannot take its port', () => {
  it('makes no database in the data folder', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const folder = join(dir.path, 'never');
      const r = await runMkt(['sandbox', 'start', '--port', String(port), '--data-dir', folder], dir.path);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`Port ${port} on 127.0.0.1 is already in use`);
      await expect(stat(join(folder, 'sandbox.sqlite'))).rejects.toThrow(/ENOENT/);
    } finally {
      blocker.close();
    }
  });
});
