// Colour goes through chalk: FORCE_COLOR turns it on (even piped) or off, NO_COLOR counts only when
// not empty, CI turns it off; the escape codes are chalk's, none written by hand.
import { stripVTControlCharacters } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { baseEnv, MKT_BIN, runMkt, tempDir } from '../support/cli.js';
import { typeInTerminal } from '../support/terminal.js';

let dir: { path: string; remove(): Promise<void> };
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => dir.remove());

const RED_ERROR = '\u001b[31mError:';
// `config get` of an unset key: an error, printed with its red label when colour is on.
const unset = (env: Record<string, string | undefined>) =>
  runMkt(['config', 'get', 'app'], dir.path, { env });

describe('colour', () => {
  it('follows FORCE_COLOR when piped, and CI and FORCE_COLOR=0 turn it off', async () => {
    expect((await unset({ FORCE_COLOR: '1' })).stderr).toContain(RED_ERROR);
    expect((await unset({ FORCE_COLOR: '0' })).stderr).not.toContain('\u001b[');
    expect((await unset({})).stderr).not.toContain('\u001b[');
  });

  it('--no-color turns it off on any command, even against FORCE_COLOR', async () => {
    const plain = await runMkt(['config', 'get', 'app', '--no-color'], dir.path, {
      env: { FORCE_COLOR: '1' },
    });
    const coloured = await unset({ FORCE_COLOR: '1' });
    expect(plain.code).toBe(coloured.code);
    expect(plain.stderr).not.toContain('\u001b[');
    expect(plain.stderr).toBe(stripVTControlCharacters(coloured.stderr));
  });

  it('on a terminal: NO_COLOR="" is not set, NO_COLOR=1 and CI=true are', async () => {
    const tty = async (env: Record<string, string>) => {
      const t = typeInTerminal(`${process.execPath} ${MKT_BIN} config get app`, {
        env: { ...baseEnv(dir.path), TERM: 'xterm-256color', ...env },
        timeoutMs: 30_000,
      });
      await t.exit;
      return { stdout: t.raw() };
    };
    expect((await tty({ NO_COLOR: '' })).stdout).toContain(RED_ERROR);
    expect((await tty({ NO_COLOR: '1' })).stdout).not.toContain(RED_ERROR);
    expect((await tty({ CI: 'true' })).stdout).not.toContain(RED_ERROR);
  }, 90_000);
});
