import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMkt } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';
import { runMktInTty } from '../support/terminal.js';
import { signInEnv, storedSecrets } from './helpers.js';

// Several accounts of one site in one profile, as with `gh auth login` twice: a second sign-in keeps
// the first, `auth list` shows both with the active one marked, `auth switch` changes which one every
// command uses, `logout` says which one went. Walked with the file store and (under with-keyring.sh)
// with the OS keychain.

const ctx = useSandbox({ dirPerTest: true });
const KEYCHAIN = process.env.MKT_TEST_KEYCHAIN === '1';

/** The stores to walk: the file always, the keychain where with-keyring.sh runs the tests. */
const stores = KEYCHAIN ? (['file', 'keychain'] as const) : (['file'] as const);

function storeEnv(store: 'file' | 'keychain'): Record<string, string | undefined> {
  if (store === 'file') return { MKT_CREDENTIAL_STORE: 'file' };
  return {
    MKT_CREDENTIAL_STORE: 'keychain',
    HOME: process.env.HOME,
    DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS,
    XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR,
    // The keychain is shared by the tests of this run: a profile of its own.
    MKT_PROFILE: `acc${process.pid}${Date.now() % 100000}`,
  };
}

function user(n: number) {
  return ctx.sandbox.seed.users[n]!;
}

describe.each(stores)('several accounts of a site (%s store)', (store) => {
  const env = storeEnv(store);
  const mkt = (args: string[], extra: Record<string, string | undefined> = {}) =>
    runMkt(args, ctx.dir, { env: { ...signInEnv(ctx.sandbox), ...env, ...extra }, timeoutMs: 30_000 });
  const login = async (n: number) => {
    const res = await mkt(['login', '--client-id', ctx.sandbox.seed.app.client_id], {
      PERSON_USER: user(n).id,
    });
    expect(res.code, res.stderr).toBe(0);
  };
  const whoami = async () => (JSON.parse((await mkt(['whoami', '--json'])).stdout) as { id: string }).id;

  it('keeps both sign-ins, lists them, switches, and says which one logout removed', async () => {
    const [ada, bob] = [user(0), user(1)];
    await login(0);
    await login(1);
    expect(await whoami()).toBe(bob.id);

    const list = await mkt(['auth', 'list', '--json']);
    expect(list.code, list.stderr).toBe(0);
    const site = JSON.parse(list.stdout).sites.find(
      (s: { site_url: string }) => s.site_url === ctx.sandbox.siteUrl,
    );
    expect(site.accounts.map((a: { id: string; active: boolean }) => [a.id, a.active])).toEqual([
      [bob.id, true],
      [ada.id, false],
    ]);
    const text = await mkt(['auth', 'list']);
    expect(text.stdout).toMatch(
      new RegExp(`✓ ${bob.name} <${bob.email}> \\(${bob.id}\\)  profile "[^"]+", OAuth token, active`),
    );
    expect(text.stdout).toContain(`${ada.name} <${ada.email}> (${ada.id})`);
    const status = await mkt(['auth', 'status']);
    expect(status.stderr).toContain(`Also signed in here: ${ada.email} (mkt auth switch`);

    // Two accounts: switch goes to the other one, no question asked.
    const sw = await mkt(['auth', 'switch']);
    expect(sw.code, sw.stderr).toBe(0);
    expect(sw.stderr).toContain(`now uses ${ada.name} <${ada.email}> (${ada.id})`);
    expect(await whoami()).toBe(ada.id);
    expect((await mkt(['auth', 'switch', '--user', bob.email, '--json'])).stdout).toContain(
      `"id": "${bob.id}"`,
    );
    expect(await whoami()).toBe(bob.id);

    const out = await mkt(['logout']);
    expect(out.code).toBe(0);
    expect(out.stderr).toContain(
      `Logged out of profile "${env.MKT_PROFILE ?? 'default'}": ${bob.name} <${bob.email}> (${bob.id}) on ${ctx.sandbox.siteUrl}`,
    );
    expect(out.stderr).toContain(`now uses ${ada.name}`);
    expect(await whoami()).toBe(ada.id);
    const last = await mkt(['logout']);
    expect(last.stderr).toContain(`${ada.name} <${ada.email}>`);
    expect((await mkt(['whoami'])).code).toBe(4);
  }, 90_000);
});

describe('mkt auth switch with more than two accounts', () => {
  const mkt = (args: string[], extra: Record<string, string | undefined> = {}) =>
    runMkt(args, ctx.dir, { env: { ...signInEnv(ctx.sandbox), ...extra }, timeoutMs: 30_000 });
  const signInAll = async () => {
    for (const n of [0, 1, 2]) {
      const res = await mkt(['login', '--client-id', ctx.sandbox.seed.app.client_id], {
        PERSON_USER: user(n).id,
      });
      expect(res.code, res.stderr).toBe(0);
    }
  };

  it('without a terminal: a usage error naming --user; --user takes an id, e-mail or name', async () => {
    await signInAll();
    const bare = await mkt(['auth', 'switch']);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('has 3 accounts on');
    expect(bare.stderr).toContain('pass --user with one of');
    const wrong = await mkt(['auth', 'switch', '--user', 'nobody@example.com']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('has no account "nobody@example.com"');
    for (const who of [user(0).id, user(1).name, user(0).email.toUpperCase()]) {
      expect((await mkt(['auth', 'switch', '--user', who])).code).toBe(0);
    }
    expect(JSON.parse((await mkt(['whoami', '--json'])).stdout).id).toBe(user(0).id);
    // A kept account can go on its own; the active one stays.
    const bob = user(1);
    const gone = await mkt(['logout', '--user', bob.email]);
    expect(gone.stderr).toContain(`Logged out of profile "default": ${bob.name} <${bob.email}> (${bob.id})`);
    expect(gone.stderr).not.toContain('now uses');
    const left = JSON.parse((await mkt(['auth', 'list', '--json'])).stdout).sites[0].accounts;
    expect(left.map((a: { id: string }) => a.id)).toEqual([user(0).id, user(2).id]);
    expect(JSON.parse((await mkt(['whoami', '--json'])).stdout).id).toBe(user(0).id);
  }, 90_000);

  it('on a terminal: asks which one', async () => {
    await signInAll();
    // Active: the third; the list is active first, then the kept ones: the second choice is the first user.
    const res = await runMktInTty(['auth', 'switch'], ctx.dir, {
      env: { MKT_SITE_URL: ctx.sandbox.siteUrl },
      waitFor: 'Account for profile',
      answer: '\r',
      timeoutMs: 30_000,
    });
    expect(res.code, res.stdout).toBe(0);
    expect(res.stdout).toMatch(/now uses .*\(usr_/);
    const who = JSON.parse((await mkt(['whoami', '--json'])).stdout).id;
    expect(who).not.toBe(user(2).id);
  }, 90_000);
});

describe('what an older mkt stored', () => {
  it('is listed, kept when another account signs in, and works again after a switch (its refresh too)', async () => {
    const ada = user(0);
    const first = await runMkt(['login', '--client-id', ctx.sandbox.seed.app.client_id], ctx.dir, {
      env: { ...signInEnv(ctx.sandbox), PERSON_USER: ada.id },
      timeoutMs: 30_000,
    });
    expect(first.code, first.stderr).toBe(0);
    // Today's layout, as the previous release left it: one token, a key (without its user) in another
    // profile, the client secret per profile.
    const file = join(ctx.dir, 'credentials.json');
    const old = await storedSecrets(ctx.dir);
    const layout = {
      'default:oauth': old['default:oauth']!,
      'work:api-key': JSON.stringify({ key: ctx.sandbox.seed.test_key, site_url: ctx.sandbox.siteUrl }),
      'signed-in-profiles': JSON.stringify(['default', 'work']),
      [`default:client-secret:${ctx.sandbox.seed.app.client_id}`]: ctx.sandbox.seed.app.client_secret,
    };
    await writeFile(file, JSON.stringify(layout), { mode: 0o600 });
    const env = { MKT_SITE_URL: ctx.sandbox.siteUrl };
    const list = JSON.parse((await runMkt(['auth', 'list', '--json'], ctx.dir, { env })).stdout);
    const accounts = list.sites[0].accounts.map((a: { profile: string; id: string; kind: string }) => [
      a.profile,
      a.kind,
      a.id,
    ]);
    expect(accounts).toEqual([
      ['default', 'token', ada.id],
      ['work', 'test_key', `key-${ctx.sandbox.seed.test_key.slice(-4)}`],
    ]);

    const bob = user(1);
    const second = await runMkt(['login'], ctx.dir, {
      env: { ...signInEnv(ctx.sandbox), MKT_CLIENT_SECRET: undefined, PERSON_USER: bob.id },
      timeoutMs: 30_000,
      input: '',
    });
    expect(second.code, second.stderr).toBe(0);
    expect((await runMkt(['auth', 'switch', '--user', ada.id], ctx.dir, { env })).code).toBe(0);
    // Her token expired meanwhile: the refresh token kept with it is the live one.
    const all = JSON.parse(await readFile(file, 'utf8')) as Record<string, string>;
    const token = JSON.parse(all['default:oauth']!) as Record<string, unknown>;
    token.expires_at = Date.now() - 1000;
    all['default:oauth'] = JSON.stringify(token);
    await writeFile(file, JSON.stringify(all));
    const who = await runMkt(['whoami', '--json'], ctx.dir, { env });
    expect(who.code, who.stderr).toBe(0);
    expect(JSON.parse(who.stdout).id).toBe(ada.id);
    const work = await runMkt(['whoami', '--json', '--profile', 'work'], ctx.dir, { env });
    expect(work.code, work.stderr).toBe(0);
  }, 90_000);
});
