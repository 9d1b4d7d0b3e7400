import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxDocument } from '../../src/sandbox/app.js';

// Redocly's `recommended` ruleset and Spectral's `oas` ruleset on the document, with the project's
// redocly.yaml and .spectral.yaml (each rule turned off there says why): no finding, warnings included.

const root = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;
let file: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mkt-openapi-lint-'));
  file = join(dir, 'openapi.json');
  await writeFile(file, JSON.stringify(sandboxDocument(), null, 2));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Runs a linter's CLI (its bin in node_modules) from the repository root; answers its output and code. */
function lint(bin: string, args: string[]): { code: number | null; out: string } {
  const result = spawnSync(process.execPath, [join(root, bin), ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 50_000,
    // Neither tool reaches out: no telemetry, no update check (CI has no network but the registry).
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
  });
  return { code: result.status, out: `${result.stdout}${result.stderr}` };
}

/** The findings of a linter's output, one line each (`rule: count`). */
const tally = (lines: string[]) => {
  const counts = new Map<string, number>();
  for (const rule of lines) counts.set(rule, (counts.get(rule) ?? 0) + 1);
  return [...counts].map(([rule, n]) => `${rule}: ${n}`).sort();
};

describe('the OpenAPI document under standard linters', () => {
  it("passes Redocly's recommended ruleset (redocly.yaml)", () => {
    const run = lint('node_modules/@redocly/cli/bin/cli.js', [
      'lint',
      '--config',
      'redocly.yaml',
      '--format',
      'stylish',
      '--max-problems',
      '1000',
      file,
    ]);
    const found = [...run.out.matchAll(/^\s+\d+:\d+\s+(?:error|warning)\s+(\S+)/gm)].map((m) => m[1]!);
    expect(tally(found), run.out.slice(-2000)).toEqual([]);
    expect(run.code).toBe(0);
  }, 60_000);

  it("passes Spectral's oas ruleset (.spectral.yaml), warnings included", () => {
    const run = lint('node_modules/@stoplight/spectral-cli/dist/index.js', [
      'lint',
      '--ruleset',
      '.spectral.yaml',
      '--format',
      'text',
      '--fail-severity',
      'hint',
      file,
    ]);
    const found = [...run.out.matchAll(/^\S+:\d+:\d+ \w+ (\S+) /gm)].map((m) => m[1]!);
    expect(tally(found), run.out.slice(-2000)).toEqual([]);
    expect(run.code).toBe(0);
  }, 60_000);
});
