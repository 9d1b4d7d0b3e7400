import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMkt, startMkt } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';
import { runMktInTty } from '../support/terminal.js';
import { browserCommand, PERSON, signInEnv, storedSecrets } from './helpers.js';

// A login that worked with a client secret keeps it for the profile and client id: the next login
// (no terminal to ask on) does not need it again. And the sandbox's "Try it" login line works as printed.

const ctx = useSandbox({ dirPerTest: true });
const account = () => `site:${ctx.sandbox.siteUrl}:client-secret:${ctx.sandbox.seed.app.client_id}`;
const login = (extra: Record<string, string | undefined>) =>
  runMkt(['login', '--client-id', ctx.sandbox.seed.app.client_id], ctx.dir, {
    env: { ...signInEnv(ctx.sandbox), ...extra },
    timeoutMs: 20_000,
  });

describe('the client secret of a login', () => {
  it('is stored once a login with MKT_CLIENT_SECRET succeeded (not when it failed), and the next login uses it', async () => {
    const wrong = await login({ MKT_CLIENT_SECRET: 'cs_notTheSecret' });
    expect(wrong.code).not.toBe(0);
    expect((await storedSecrets(ctx.dir))[account()]).toBeUndefined();

    const first = await login({});
    expect(first.code, first.stderr).toBe(0);
    expect((await storedSecrets(ctx.dir))[account()]).toBe(ctx.sandbox.seed.app.client_secret);
    const config = await readFile(join(ctx.dir, 'config.json'), 'utf8');
    expect(config).not.toContain(ctx.sandbox.seed.app.client_secret);

    const again = await login({ MKT_CLIENT_SECRET: undefined });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('Logged in as');

    // On a terminal, where it could ask, it does not: a wrong secret would be typed if it did.
    const { MKT_CLIENT_SECRET: _, ...noSecret } = signInEnv(ctx.sandbox);
    const tty = await runMktInTty(['login', '--client-id', ctx.sandbox.seed.app.client_id], ctx.dir, {
      env: noSecret,
      waitFor: 'Client secret of',
      answer: 'cs_typedByMistake\r',
      timeoutMs: 30_000,
    });
    expect(tty.code, tty.stdout).toBe(0);
    expect(tty.stdout).not.toContain('Client secret of');
    expect(tty.stdout).toContain('Logged in as');
  }, 60_000);

  it('serves every profile of the same site: a second profile signs in with stdin closed, nothing asked', async () => {
    const first = await login({});
    expect(first.code, first.stderr).toBe(0);
    const { MKT_CLIENT_SECRET: _, ...noSecret } = signInEnv(ctx.sandbox);
    const second = await runMkt(
      ['login', '--profile', 'work', '--client-id', ctx.sandbox.seed.app.client_id],
      ctx.dir,
      { env: noSecret, input: '', timeoutMs: 20_000 },
    );
    expect(second.stderr).not.toContain('Client secret of');
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain('Logged in as');
    // One secret for the site, no copy per profile.
    const names = Object.keys(await storedSecrets(ctx.dir)).filter((n) => n.includes('client-secret'));
    expect(names).toEqual([account()]);
  }, 60_000);

  it('still finds a secret stored per profile by an older mkt, for every profile of the site', async () => {
    const { writeFile } = await import('node:fs/promises');
    const legacy = `default:client-secret:${ctx.sandbox.seed.app.client_id}`;
    await writeFile(
      join(ctx.dir, 'credentials.json'),
      JSON.stringify({ [legacy]: ctx.sandbox.seed.app.client_secret }),
      { mode: 0o600 },
    );
    const { MKT_CLIENT_SECRET: _, ...noSecret } = signInEnv(ctx.sandbox);
    const run = (profile: string) =>
      runMkt(['login', '--profile', profile, '--client-id', ctx.sandbox.seed.app.client_id], ctx.dir, {
        env: noSecret,
        input: '',
        timeoutMs: 20_000,
      });
    expect((await run('default')).code).toBe(0);
    const other = await run('work');
    expect(other.code, other.stderr).toBe(0);
    expect((await storedSecrets(ctx.dir))[legacy]).toBe(ctx.sandbox.seed.app.client_secret);
  }, 60_000);
});

describe('mkt sandbox start', () => {
  it('prints a login line that signs the developer in with apps:write, as printed', async () => {
    const sandbox = startMkt(['sandbox', 'start', '--port', '0', '--data-dir', join(ctx.dir, 'sb')], ctx.dir);
    try {
      await sandbox.waitForStderr(/Press Ctrl-C/, 20_000);
      await sandbox.waitFor(() => /Developer:.*\)$/m.test(sandbox.stdout()));
      const line = /^ {2}MKT_CLIENT_SECRET=(\S+) mkt (login .*)$/m.exec(sandbox.stderr());
      expect(line, sandbox.stderr()).not.toBeNull();
      const argv = line![2]!.split(' ');
      expect(argv).toEqual(expect.arrayContaining(['--scope', 'apps:write']));
      const site = argv[argv.indexOf('--site-url') + 1]!;
      const developer = /Developer:\s+.*\((usr_\w+)\)/.exec(sandbox.stdout())![1]!;
      const person = { MKT_BROWSER: browserCommand(PERSON), PERSON_USER: developer };
      const signIn = await runMkt(argv, ctx.dir, {
        env: { MKT_CLIENT_SECRET: line![1]!, ...person },
        timeoutMs: 20_000,
      });
      expect(signIn.code, signIn.stderr).toBe(0);
      // What the developer does next: apps, then the plans and keys of the app.
      const apps = await runMkt(['apps', 'list', '--json', '--site-url', site], ctx.dir);
      expect(apps.code, apps.stderr).toBe(0);
      const app = (JSON.parse(apps.stdout) as Array<{ id: string }>)[0]!.id;
      for (const next of [
        ['plans', 'list'],
        ['keys', 'list'],
      ]) {
        const res = await runMkt([...next, '--app', app, '--site-url', site], ctx.dir);
        expect(res.code, `${next.join(' ')}: ${res.stderr}`).toBe(0);
      }
    } finally {
      sandbox.child.kill('SIGINT');
      await sandbox.exit();
    }
  });
});
