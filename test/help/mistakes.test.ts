import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    expect(res.stderr).toContain('Error: apps lsit is not a mkt command. Did you mean "apps list"?');
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
