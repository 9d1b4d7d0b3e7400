import { describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { FAST_COMMANDS } from '../../src/fast-path.js';
import { runMkt } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';

const ctx = useSandbox();

describe('the fast path for whoami and entitlements', () => {
  it('accepts exactly the flags the oclif commands define', async () => {
    const manifest = JSON.parse(
      await readFile(new URL('../../oclif.manifest.json', import.meta.url), 'utf8'),
    );
    for (const [name, command] of Object.entries(FAST_COMMANDS)) {
      const oclifFlags = Object.keys(manifest.commands[name].flags).sort();
      const fastFlags = ['json', 'profile', 'site-url', 'verbose', ...Object.keys(command.options)].sort();
      expect(fastFlags).toEqual(oclifFlags);
    }
  });

  it.each([
    [['whoami', '--json'], 'key'],
    [['whoami'], 'key'],
    [['entitlements', '--json'], 'key'],
    [['entitlements', '--user', 'USER', '--json'], 'key'],
    [['entitlements', '--user', 'USER', '--feature', 'export'], 'key'],
    [['entitlements', '--user', 'USER', '--feature', 'nope', '--json'], 'key'],
    [['entitlements', '--user', 'not-a-user'], 'key'],
    [['whoami', '--json'], 'none'],
  ])('prints the same as oclif for %j (credential: %s)', async (args, credential) => {
    const argv = args.map((a) => (a === 'USER' ? ctx.sandbox.seed.users[0]!.id : a));
    const env = {
      MKT_SITE_URL: ctx.sandbox.siteUrl,
      MKT_API_KEY: credential === 'key' ? ctx.sandbox.seed.test_key : undefined,
    };
    const fast = await runMkt(argv, ctx.dir, { env });
    const slow = await runMkt(argv, ctx.dir, { env: { ...env, MKT_FAST_PATH: '0' } });
    expect(fast.code).toBe(slow.code);
    expect(fast.stdout).toBe(slow.stdout);
    expect(fast.stderr.replace(/\n\s+See: .*\n/, '\n')).toBe(slow.stderr.replace(/\n\s+See: .*\n/, '\n'));
  });

  it('leaves help and malformed flags to oclif', async () => {
    const help = await runMkt(['entitlements', '--help'], ctx.dir);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--feature');
    const bad = await runMkt(['whoami', '--colour'], ctx.dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Nonexistent flag: --colour');
  });
});
