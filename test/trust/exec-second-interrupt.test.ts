// `mkt sandbox exec`: a second Ctrl-C while CMD ignores the first ends mkt, and with it CMD and what
// CMD started (the processes door kills them when mkt exits), and the temporary folder (whose
// database holds every secret of that sandbox) is removed.
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMkt, tempDir } from '../support/cli.js';

let dir: { path: string; remove(): Promise<void> };
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(async () => dir.remove());

/** The process exists and has not exited (a zombie left to be reaped has). */
function running(pid: number): boolean {
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('mkt sandbox exec, interrupted twice', () => {
  it.runIf(process.platform === 'linux')(
    'leaves no CMD behind and removes its temporary folder',
    async () => {
      const script =
        'trap "" INT TERM; sleep 60 & echo "pids $$ $! $MKT_SANDBOX_DATA_DIR"; wait; wait; echo "CMD went on"';
      const m = startMkt(['sandbox', 'exec', '--port', '0', '--', 'sh', '-c', script], dir.path, {
        timeoutMs: 60_000,
      });
      await m.waitFor((lines) => lines.some((l) => String(l.text ?? '').startsWith('pids ')), 30_000);
      const line = m.lines.find((l) => String(l.text ?? '').startsWith('pids '))!;
      const [, sh, sleep, folder] = String(line.text).split(' ') as [string, string, string, string];
      expect(existsSync(folder)).toBe(true);
      m.child.kill('SIGINT');
      await new Promise((r) => setTimeout(r, 500));
      // CMD ignored the first: mkt waits for it, as it should.
      expect(running(Number(sh))).toBe(true);
      m.child.kill('SIGINT');
      const { code } = await m.exit();
      expect(code).toBe(130);
      await new Promise((r) => setTimeout(r, 300));
      expect(running(Number(sh))).toBe(false);
      expect(running(Number(sleep))).toBe(false);
      expect(existsSync(folder)).toBe(false);
    },
  );
});
