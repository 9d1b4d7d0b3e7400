import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { baseEnv, MKT_BIN, runMkt, tempDir } from '../support/cli.js';
import { typeInTerminal } from '../support/terminal.js';

// A mistyped command leads somewhere, also off a terminal (a script's log, CI): the closest
// command, and the line to run instead.

let dir: { path: string; remove(): Promise<void> };
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

describe('a mistyped command', () => {
  it('off a terminal, says "Did you mean" and hints the corrected line (exit 127, as a shell)', async () => {
    const res = await runMkt(['apps', 'lsit'], dir.path);
    expect(res.stderr).toContain('Error: "apps lsit" is not a mkt command. Did you mean "apps list"?');
    expect(res.stderr).toContain('Try: mkt apps list\n');
    expect(res.stderr).toContain('Try: mkt apps --help');
    expect(res.stdout).toBe('');
    expect(res.code).toBe(127);
  });

  it('on a terminal, says the same and does not stop to ask (no guess is ever run)', async () => {
    const terminal = typeInTerminal(`"${process.execPath}" "${MKT_BIN}" apps lsit`, {
      env: { ...baseEnv(dir.path), TERM: 'dumb', NO_COLOR: '1' },
      timeoutMs: 15_000,
    });
    expect(await terminal.exit, terminal.screen()).toBe(127);
    expect(terminal.screen()).toContain('Did you mean "apps list"?');
    expect(terminal.screen()).toContain('Try: mkt apps list');
  });

  it('keeps the rest of the line in the hint, quoted for the shell', async () => {
    const res = await runMkt(['trigerr', 'subscription.created', '--user', "usr_1 o'x"], dir.path);
    expect(res.stderr).toContain('Did you mean "trigger"?');
    expect(res.stderr).toContain(`Try: mkt trigger subscription.created --user 'usr_1 o'\\''x'`);
    expect(res.code).toBe(127);
  });

  it('suggests nothing far-fetched, and answers JSON with --json', async () => {
    const far = await runMkt(['xyzzy'], dir.path);
    expect(far.stderr).not.toContain('Did you mean');
    expect(far.stderr).toContain('Try: mkt --help');
    const json = await runMkt(['plans', 'creat', '--json'], dir.path);
    expect(JSON.parse(json.stdout).error).toMatchObject({
      code: 'unknown_command',
      hints: ['mkt plans create --json', 'mkt plans --help'],
    });
    expect(json.code).toBe(127);
  });
});

describe('words a command does not take, and commands a topic does not have', () => {
  it('an argument after a command that takes none is a usage error naming it (exit 2), not "not a command"', async () => {
    const res = await runMkt(['whoami', 'extra'], dir.path);
    expect(res.stderr).toContain('Unexpected argument "extra": mkt whoami takes no arguments.');
    expect(res.stderr).not.toContain('not a mkt command');
    expect(res.stderr).not.toContain('Try: mkt whoami extra');
    expect(res.code).toBe(2);
  });

  it("an unknown command of a real topic is named whole, with the topic's real commands", async () => {
    const res = await runMkt(['apps', 'frobnicate'], dir.path);
    expect(res.stderr).toContain('"apps frobnicate" is not a mkt command.');
    expect(res.stderr).toMatch(/The apps commands: create, delete, get, list, .*use, verify-context-token\./);
    expect(res.stderr).not.toContain('api');
    expect(res.stderr).toContain('Try: mkt apps --help');
    expect(res.code).toBe(127);
    const nested = await runMkt(['simulator', 'users', 'frobnicate'], dir.path);
    expect(nested.stderr).toContain('"simulator users frobnicate" is not a mkt command.');
    expect(nested.stderr).toContain(
      'The simulator users commands: cancel, create, get, list, revoke, update.',
    );
    expect(nested.stderr).not.toContain('simulator check');
  });

  it('a mistyped topic before a real command suggests that command, the words in place', async () => {
    const res = await runMkt(['aps', 'list', '--json'], dir.path);
    expect(JSON.parse(res.stdout).error).toMatchObject({
      message: '"aps list" is not a mkt command. Did you mean "apps list"?',
      hints: ['mkt apps list --json', 'mkt --help'],
    });
  });

  it('no hint repeats the failing line, and a guess never gets words it does not take', async () => {
    for (const argv of [
      ['apps', 'lsit', 'foo'],
      ['whoami', 'extra'],
      ['apps', 'frobnicate', 'x'],
    ]) {
      const res = await runMkt([...argv, '--json'], dir.path);
      const hints: string[] = JSON.parse(res.stdout).error.hints;
      expect(hints).not.toContain(['mkt', ...argv, '--json'].join(' '));
      expect(hints.every((h) => !h.includes('foo'))).toBe(true);
    }
  });

  it('a mistyped flag gets "Did you mean" the flag the command has', async () => {
    const res = await runMkt(['entitlements', '--fature', 'export'], dir.path);
    expect(res.stderr).toContain('Unknown flag --fature. Did you mean --feature?');
    expect(res.code).toBe(2);
  });

  it('an argument left out is never read from stdin: a shell loop keeps its input', async () => {
    // oclif's parser takes a missing argument from a piped stdin: the first `mkt` of a `while read`
    // loop read the loop's remaining lines as its argument. Now each run says what it misses.
    const loop = `printf 'one\\ntwo\\nthree\\n' | while read x; do "$NODE" "$MKT" config get 2>>"$ERR"; echo "$x"; done`;
    const err = `${dir.path}/loop-stderr.txt`;
    const res = spawnSync('sh', ['-c', loop], {
      env: { ...baseEnv(dir.path), NODE: process.execPath, MKT: MKT_BIN, ERR: err },
      encoding: 'utf8',
    });
    expect(res.stdout).toBe('one\ntwo\nthree\n');
    expect(readFileSync(err, 'utf8')).toContain('Missing');
    // Given on stdin alone, it is not taken either.
    const piped = await runMkt(['config', 'get'], dir.path, { input: 'app\n' });
    expect(piped.code).toBe(2);
  });
});
