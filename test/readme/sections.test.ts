import { spawn } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MKT_BIN, baseEnv, startMkt } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';
import { docPath, docSection } from './readme-commands.js';

// The guides' "Your webhook handler" (docs/webhooks.md) and "Scripting mkt" (docs/scripting.md), run
// as written with the sandbox's values in place of the placeholders (and a free port for the
// handler's 3000).

const ctx = useSandbox();

/** The first fenced block of `lang` in the guide's section `title`. */
function block(guide: string, title: string, lang: string): string {
  const text = docSection(docPath(guide), title);
  return new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(text)![1]!;
}

/** Runs a command to its end and collects stdout. */
function run(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

describe('the guides, run as written', () => {
  it('"Your webhook handler" checks the signature and receives what listen forwards', async () => {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const file = join(ctx.dir, 'webhook-handler.mjs');
    await writeFile(
      file,
      block('docs/webhooks.md', 'Your webhook handler', 'js').replace('listen(3000', `listen(${port}`),
    );
    const handler = spawn(process.execPath, [file], {
      env: { ...process.env, MKT_WEBHOOK_SECRET: ctx.sandbox.seed.app.webhook_secret },
    });
    let printed = '';
    handler.stdout.on('data', (d: Buffer) => (printed += d));
    const listen = startMkt(['webhooks', 'listen', '--forward-to', `localhost:${port}/webhooks`], ctx.dir, {
      env: ctx.env,
      timeoutMs: 60_000,
    });
    try {
      await listen.waitForStderr(/Ready/);
      const forged = await fetch(`http://127.0.0.1:${port}/webhooks`, {
        method: 'POST',
        headers: { 'x-marketplace-signature': 'sha256=00' },
        body: '{}',
      });
      expect(forged.status).toBe(401);
      const sent = await ctx.mkt(['trigger', 'subscription.created']);
      expect(sent.code, sent.stderr).toBe(0);
      for (let i = 0; i < 100 && !printed.includes('subscription.created'); i++)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(printed).toMatch(/^subscription\.created usr_\w+$/m);
    } finally {
      listen.child.kill('SIGINT');
      await listen.exit();
      handler.kill();
    }
  }, 90_000);

  it('"Scripting mkt" runs under set -euo pipefail and tells a yes from an error', async () => {
    const bin = join(ctx.dir, 'bin');
    await run('mkdir', ['-p', bin], process.env);
    await writeFile(join(bin, 'mkt'), `#!/bin/sh\nexec "${process.execPath}" "${MKT_BIN}" "$@"\n`);
    await chmod(join(bin, 'mkt'), 0o755);
    // No jq binary: one that fails stands first on the PATH (--jq is built in).
    await writeFile(join(bin, 'jq'), '#!/bin/sh\necho "jq: not installed" >&2\nexit 127\n');
    await chmod(join(bin, 'jq'), 0o755);
    const script = join(ctx.dir, 'script.sh');
    await writeFile(script, block('docs/scripting.md', 'Scripting mkt', 'sh'));
    const env = { ...baseEnv(ctx.dir), ...ctx.env, PATH: `${bin}:${process.env.PATH}` };
    const res = await run('bash', [script], env);
    expect(res.code, res.err).toBe(0);
    expect(res.out).toMatch(/@/);
    expect(res.out).toContain('export allowed');
    // A failure stops the script with mkt's exit code (6: the site cannot be reached).
    const down = await run('bash', [script], { ...env, MKT_SITE_URL: 'http://127.0.0.1:9' });
    expect(down.code).toBe(6);
  }, 90_000);
});
