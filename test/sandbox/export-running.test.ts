import { mkdir, symlink, writeFile, rename } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runMkt, tempDir } from '../support/cli.js';
import { killAllSandboxProcesses, startSandboxProcess } from '../support/sandbox.js';

// `mkt sandbox export` on a running sandbox (a consistent snapshot read through its database), and
// what it says when it cannot: never "Internal error (a bug in mkt)".

afterEach(() => killAllSandboxProcesses());

describe('mkt sandbox export', () => {
  it('exports a running sandbox, with what was written a moment before, while writes go on', async () => {
    const dir = await tempDir();
    try {
      const data = join(dir.path, 'data');
      const sb = await startSandboxProcess(data, dir.path);
      const key = sb.seed.test_key;
      const made: string[] = [];
      // Writes keep coming while the export runs: each answered one is in the snapshot or after it.
      let writing = true;
      const writer = (async () => {
        while (writing) {
          const res = await fetch(`${sb.siteUrl}/api/v1/simulator/users`, {
            method: 'POST',
            headers: { 'x-api-key': key, 'content-type': 'application/json' },
            body: JSON.stringify({ app_id: sb.seed.app.id, plan: 'free', name: `U${made.length}` }),
          });
          if (res.status === 201) made.push(((await res.json()) as { id: string }).id);
        }
      })();
      await new Promise((r) => setTimeout(r, 300));
      const before = [...made];
      const out = join(dir.path, 'state.json');
      const exported = await runMkt(['sandbox', 'export', '--data-dir', data, '--output', out], dir.path);
      writing = false;
      await writer;
      expect(exported.code, exported.stderr).toBe(0);
      const state = (await import(out, { with: { type: 'json' } })).default as {
        apps: Array<{ users: Array<{ id: string; name: string }> }>;
      };
      const ids = state.apps[0]!.users.map((u) => u.id);
      for (const id of before) expect(ids).toContain(id);
      // A consistent prefix: every user in the file was made before any that is not.
      const inFile = made.map((id) => ids.includes(id));
      expect(inFile.indexOf(false) === -1 || !inFile.slice(inFile.indexOf(false)).includes(true)).toBe(true);
    } finally {
      await dir.remove();
    }
  }, 60_000);

  it('says what is wrong with the folder or the output, and creates nothing', async () => {
    const dir = await tempDir();
    try {
      const missing = join(dir.path, 'nowhere');
      const none = await runMkt(['sandbox', 'export', '--data-dir', missing], dir.path);
      expect(none.code).toBe(1);
      expect(none.stderr).toContain(`There is no sandbox data folder at ${missing}`);
      expect(existsSync(missing)).toBe(false);

      const file = join(dir.path, 'a-file');
      await writeFile(file, 'not a folder');
      const notFolder = await runMkt(['sandbox', 'export', '--data-dir', file], dir.path);
      expect(notFolder.code).toBe(2);
      expect(notFolder.stderr).toContain(`${file} is not a folder`);

      // A stopped sandbox's folder, then its database made a link.
      const data = join(dir.path, 'data');
      const sb = await startSandboxProcess(data, dir.path);
      await sb.stop('SIGTERM');
      const outFolder = join(dir.path, 'out');
      await mkdir(outFolder);
      const toFolder = await runMkt(
        ['sandbox', 'export', '--data-dir', data, '--output', outFolder],
        dir.path,
      );
      expect(toFolder.code).toBe(2);
      expect(toFolder.stderr).toContain(`--output ${outFolder} is a folder`);
      await rename(join(data, 'sandbox.sqlite'), join(dir.path, 'elsewhere.sqlite'));
      await symlink(join(dir.path, 'elsewhere.sqlite'), join(data, 'sandbox.sqlite'));
      const linked = await runMkt(['sandbox', 'export', '--data-dir', data], dir.path);
      expect(linked.code).toBe(1);
      expect(linked.stderr).toMatch(/is a symbolic link, not the plain file the sandbox keeps/);
      for (const r of [none, notFolder, toFolder, linked])
        expect(r.stderr).not.toMatch(/Internal error|a bug in mkt/);
    } finally {
      await dir.remove();
    }
  }, 60_000);
});
