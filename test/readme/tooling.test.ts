import { execFile, spawn } from 'node:child_process';
import { chmod, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/cli.js';

// The README's test commands, as CI runs them: they say what they are doing before a long step,
// and what they write to a log file is plain text.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let dir: { path: string; remove(): Promise<void> };
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

/** Runs a command with stdout and stderr going to one file, as `.ci/run > ci.log 2>&1` does. */
async function runToFile(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const log = join(dir.path, `${Date.now()}.log`);
  const { open } = await import('node:fs/promises');
  const file = await open(log, 'w');
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', file.fd, file.fd] });
      child.on('error', reject);
      child.on('close', () => resolve());
    });
  } finally {
    await file.close();
  }
  return readFile(log, 'utf8');
}

describe('scripts/test-everything.sh', () => {
  it('says which apt-get step runs, and that it is slow, before each one', async () => {
    // A PATH with everything the script looks for except zsh, and an apt-get that only reports
    // what it was asked (the real one would install it); "install" fails to stop the script there.
    const bin = join(dir.path, 'bin');
    await promisify(execFile)('mkdir', ['-p', bin]);
    for (const tool of [
      'bash',
      'dirname',
      'id',
      'dbus-run-session',
      'gnome-keyring-daemon',
      'script',
      'faketime',
    ]) {
      const { stdout } = await promisify(execFile)('bash', ['-c', `command -v ${tool}`]);
      await symlink(stdout.trim(), join(bin, tool));
    }
    await writeFile(
      join(bin, 'apt-get'),
      '#!/bin/sh\necho "APT $1" >&2\n[ "$1" = install ] && exit 1\nexit 0\n',
    );
    await chmod(join(bin, 'apt-get'), 0o755);
    const log = await runToFile('bash', ['scripts/test-everything.sh'], { PATH: bin, HOME: dir.path });
    const lines = log.trim().split('\n');
    const before = (step: string) => lines[lines.indexOf(`APT ${step}`) - 1];
    expect(lines, log).toContain('APT install');
    expect(before('update')).toMatch(/^apt-get update .*can take/);
    expect(before('install')).toMatch(/^apt-get install zsh .*can take a few minutes/);
  });
});

describe('the test runner', () => {
  it('writes no colour codes to a log file', async () => {
    const env = { ...process.env };
    delete env.MKT_KEYRING_SESSION;
    delete env.NO_COLOR;
    delete env.FORCE_COLOR;
    const log = await runToFile(
      'scripts/with-keyring.sh',
      ['node_modules/.bin/vitest', 'run', 'test/plans/money.test.ts'],
      env,
    );
    expect(log).toMatch(/Tests\s+\d+ passed/);
    expect(log).not.toContain('\u001b[');
  }, 60_000);
});
