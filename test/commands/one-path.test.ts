import { describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { MKT_BIN } from '../support/cli.js';
import { useOnePath } from '../support/one-path.js';
import { useSandbox } from '../support/sandbox.js';

// There is one way mkt runs: bin/run.js hands every argv to oclif, bundled in dist/
// (esbuild.config.js). These files (one-path*.test.ts) check that the bundle is oclif unchanged: every
// command and every help screen gives the same bytes and exit code as oclif run the plain way — from
// node_modules, on tsc's output in build/, the help and autocomplete plugins as plugins
// (test/support/one-path.ts). Here: the entry point, commands against the sandbox, completion scripts.

const ctx = useSandbox();
const one = useOnePath();

describe('the bundled CLI is oclif unchanged', () => {
  it('has one entry point that loads oclif from the bundle', async () => {
    const bin = await readFile(MKT_BIN, 'utf8');
    expect(bin).not.toMatch(/fast-path|@oclif\/core/);
    const ids = Object.keys(one.manifest.commands);
    for (const id of ['whoami', 'help', 'autocomplete', 'apps:list', 'sandbox:start'])
      expect(ids).toContain(id);
  });

  it('runs commands against the sandbox the same', async () => {
    const env = { MKT_SITE_URL: ctx.sandbox.siteUrl, MKT_API_KEY: ctx.sandbox.seed.test_key };
    const user = ctx.sandbox.seed.users[0]!.id;
    const runs = [
      ['whoami'],
      ['whoami', '--json'],
      ['entitlements', '--json'],
      ['entitlements', '--user', user, '--json'],
      ['entitlements', '--user', user, '--feature', 'export'],
      ['entitlements', '--user', 'not-a-user'],
      ['apps', 'list', '--json'],
      ['plans', 'list', '--json'],
      ['keys', 'list', '--json'],
      ['auth', 'status', '--json'],
      ['webhooks', 'deliveries', '--json'],
      ['config', 'get', 'site-url'],
      ['config', 'list', '--json'],
      ['trigger'],
      ['api', 'GET', '/api/v1/whoami'],
    ];
    for (const args of runs) await one.expectSame(args, env);
    await one.expectSame(['whoami', '--json'], { MKT_SITE_URL: ctx.sandbox.siteUrl });
  }, 300_000);

  it('writes the same completion scripts', async () => {
    for (const shell of ['bash', 'zsh']) await one.expectSame(['autocomplete', shell]);
  }, 60_000);
});
