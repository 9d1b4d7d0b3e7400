import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseEnv, MKT_BIN } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';
import { docPath, readmeCommands } from '../readme/readme-commands.js';

// The guide's "Test a subscription's life" (docs/sandbox.md), run as written in one bash session (its variables carry
// from line to line), against a sandbox, with the test key in the environment.

const ctx = useSandbox();
const GUIDE = docPath('docs/sandbox.md');

function bash(
  script: string,
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', script], { env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("the sandbox guide's subscription life", () => {
  it('runs as written: active, past due after the declined renewal, expired after the grace period', async () => {
    const commands = readmeCommands(GUIDE, "Test a subscription's life");
    expect(commands[0]).toBe('mkt apps payments status');
    expect(commands).toContain('mkt simulator clock advance 31d');
    // `mkt` is the built CLI, as after `npm install -g`; each line's output is fenced for the checks.
    const bin = join(ctx.dir, 'bin');
    const script = [
      `mkdir -p ${bin} && printf '#!/bin/sh\\nexec "${process.execPath}" "${MKT_BIN}" "$@"\\n' > ${bin}/mkt && chmod +x ${bin}/mkt`,
      ...commands.flatMap((line, i) => [`echo "@@ ${i}"`, `echo "@@ ${i}" >&2`, line, `echo "@@ exit $?"`]),
    ].join('\n');
    const env = {
      ...baseEnv(ctx.dir),
      ...ctx.env,
      PATH: `${bin}:${dirname(process.execPath)}:${process.env.PATH}`,
    };
    const run = await bash(script, env);
    const outs = run.stdout.split(/^@@ \d+\n/m).slice(1);
    const errs = run.stderr.split(/^@@ \d+\n/m).slice(1);
    const exit = (i: number) => Number(/@@ exit (\d+)/.exec(outs[i]!)?.[1]);
    const at = (prefix: string) => commands.findIndex((c) => c.startsWith(prefix));
    expect(
      commands.map((_, i) => exit(i)),
      run.stderr,
    ).toEqual(commands.map(() => 0));
    expect(errs[at('mkt entitlements')]).toMatch(/includes "export" \(active until/);
    expect(outs[at('mkt simulator clock advance 31d')]).toMatch(/renewal_declined {2}active → past_due/);
    expect(errs[at('mkt simulator check')]).toMatch(/may use "export".*past_due/);
    expect(outs[at('mkt simulator clock advance 7d')]).toMatch(
      /expired {2}past_due → expired[\s\S]*event subscription\.cancelled \(payment_failed\)/,
    );
    expect(outs[at('mkt entitlements --user $USER_ID --feature export ||')]).toContain('no access now');
    const charges = outs[at('mkt apps payments list')]!.trim().split('\n').slice(0, -1);
    expect(charges.map((l) => l.split('\t').slice(4, 7).join(' '))).toEqual([
      'initial 9.99 USD succeeded',
      'renewal 9.99 USD declined',
      'retry 9.99 USD declined',
      'retry 9.99 USD declined',
      'retry 9.99 USD declined',
    ]);
  }, 120_000);
});
