// --jq runs the user's expression on the main thread with SIGINT and SIGTERM at their default action
// (src/platform/expression.ts): an endless one ends on Ctrl-C (SIGINT) or SIGTERM within a second,
// with the status a shell shows (130, 143); one that outgrows its memory, or prints without end, is
// refused in plain words (not "Aborted()" as a bug); on a terminal C1 controls and bidi overrides
// inside the JSON it prints are shown escaped.
import { constants } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMkt, runMkt, tempDir } from '../support/cli.js';
import { runMktInTty } from '../support/terminal.js';

let dir: { path: string; remove(): Promise<void> };
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(async () => dir.remove());

describe('--jq', () => {
  for (const [expression, signal, code] of [
    ['last(range(1e15))', 'SIGINT', 130],
    ['def f: f; f', 'SIGTERM', 143],
  ] as const) {
    it(`an endless expression (${expression}) ends on ${signal} within 1 s`, async () => {
      const m = startMkt(['config', 'list', '--jq', expression], dir.path, { timeoutMs: 20_000 });
      // Past start-up, jq is running the expression (the check before the command runs it on null).
      await new Promise((r) => setTimeout(r, 2_000));
      expect(m.child.exitCode).toBeNull();
      const sent = Date.now();
      m.child.kill(signal);
      const [exit, by] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
        m.child.once('close', (c, s) => resolve([c, s])),
      );
      expect(Date.now() - sent).toBeLessThan(1_000);
      // Ended by the signal itself (its default action): a shell's $? is 128 + its number.
      expect(exit ?? 128 + constants.signals[by!]).toBe(code);
    });
  }

  it('refuses an expression that outgrows its memory in plain words (not a bug in mkt)', async () => {
    const r = await runMkt(['config', 'list', '--jq', '[range(1e9)] | length'], dir.path, {
      env: { MKT_JQ_MEMORY_MB: '256' },
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain('The --jq expression needed more than 256 MB of memory; mkt stopped it.');
    expect(r.stderr).not.toMatch(/Internal error|Aborted/);
  });

  it('stops an expression that prints without end at a quarter of its memory, in plain words', async () => {
    const r = await runMkt(['config', 'list', '--jq', 'range(1e12)'], dir.path, {
      env: { MKT_JQ_MEMORY_MB: '64' },
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain('The --jq expression printed more than 16 MB; mkt stopped it.');
    expect(r.stdout).toBe('');
  });

  it('on a terminal, shows U+009B (CSI) and U+202E (right-to-left override) inside JSON escaped', async () => {
    const res = await runMktInTty(['config', 'list', '--jq', '{a: "x\\u009b2Jy\\u202ez"}'], dir.path, {
      waitFor: '"a"',
      answer: '',
    });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('x\\u009b2Jy\\u202ez');
    expect(res.stdout).not.toMatch(/[\u009b\u202e]/);
  });
});
