import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { chmod, lstat, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AutoStore, FileStore, KeychainStore, type CredentialStore } from '../../src/credentials/store.js';
import { runMkt, tempDir } from '../support/cli.js';
import { json, startServer } from '../support/server.js';

let dir: { path: string; remove(): Promise<void> };
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => dir.remove());

describe('FileStore', () => {
  it('keeps secrets in a 0600 file inside a 0700 folder', async () => {
    const folder = join(dir.path, 'nested');
    const store = new FileStore(folder);
    await store.set('default:api-key', 'test_abc');
    expect(await store.get('default:api-key')).toBe('test_abc');
    expect((await stat(store.file)).mode & 0o777).toBe(0o600);
    expect((await stat(folder)).mode & 0o777).toBe(0o700);
    expect(await store.delete('default:api-key')).toBe(true);
    expect(await store.delete('default:api-key')).toBe(false);
    expect(await store.get('default:api-key')).toBeNull();
  });

  it('refuses a corrupt file and leaves it untouched', async () => {
    const store = new FileStore(dir.path);
    await writeFile(store.file, '{"default:oauth": ', { mode: 0o600 });
    await expect(store.set('x', 'y')).rejects.toMatchObject({ code: 'credentials_corrupt' });
    expect(await readFile(store.file, 'utf8')).toBe('{"default:oauth": ');
  });

  it('tightens a file someone made readable by others', async () => {
    const store = new FileStore(dir.path);
    await store.set('a', 'b');
    await chmod(store.file, 0o644);
    expect(await store.get('a')).toBe('b');
    expect((await stat(store.file)).mode & 0o777).toBe(0o600);
  });
});

describe('the credential file behind a symbolic link', () => {
  it('is never read, written or chmod-ed through the link; the command says so', async () => {
    const elsewhere = join(dir.path, 'elsewhere.json');
    await writeFile(elsewhere, '{}\n', { mode: 0o644 });
    await chmod(elsewhere, 0o644);
    await symlink(elsewhere, join(dir.path, 'credentials.json'));
    const s = await startServer((_req, res) => json(res, 200, { id: 'usr_1' }));
    try {
      const r = await runMkt(['login', '--with-api-key'], dir.path, {
        env: { MKT_SITE_URL: s.url },
        input: 'test_linkedKey1\n',
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('credentials.json is a symbolic link');
    } finally {
      await s.close();
    }
    expect((await lstat(join(dir.path, 'credentials.json'))).isSymbolicLink()).toBe(true);
    expect(await readFile(elsewhere, 'utf8')).toBe('{}\n');
    expect((await stat(elsewhere)).mode & 0o777).toBe(0o644);
  });
});

describe('choosing a store', () => {
  it('falls back to the file without a D-Bus session: silent when reading, announced where a secret is stored', async () => {
    const s = await startServer((req, res) =>
      req.headers['x-api-key'] === 'test_fallbackKey1'
        ? json(res, 200, { id: 'usr_1', name: 'Una' })
        : json(res, 401, { error: { code: 'unauthorized', message: 'no credentials' } }),
    );
    const env = { MKT_SITE_URL: s.url, MKT_CREDENTIAL_STORE: undefined, DBUS_SESSION_BUS_ADDRESS: undefined };
    try {
      const read = await runMkt(['api', 'GET', '/whoami'], dir.path, { env });
      expect(read.code).toBe(4);
      expect(read.stderr).not.toMatch(/keychain|credentials\.json/);
      const login = await runMkt(['login', '--with-api-key'], dir.path, {
        env,
        input: 'test_fallbackKey1\n',
      });
      expect(login.code).toBe(0);
      expect(login.stderr.match(/No OS keychain answered/g)).toHaveLength(1);
      expect(login.stderr).toContain(`stored in ${join(dir.path, 'credentials.json')}`);
      expect(login.stderr).toContain('MKT_CREDENTIAL_STORE=keychain or =file');
      const whoami = await runMkt(['whoami'], dir.path, { env });
      expect(whoami.code).toBe(0);
      expect(whoami.stderr).toBe('');
      const status = await runMkt(['auth', 'status'], dir.path, { env });
      expect(status.stdout).toMatch(
        /Source:\s+file \S+credentials\.json \(no OS keychain answered; choose with MKT_CREDENTIAL_STORE=keychain\|file\)/,
      );
    } finally {
      await s.close();
    }
  });

  it('says "No OS keychain answered" once per config folder: not again after a logout, nor twice for two commands at once', async () => {
    const s = await startServer((req, res) =>
      String(req.headers['x-api-key']).startsWith('test_once')
        ? json(res, 200, { id: 'usr_1', name: 'Una' })
        : json(res, 401, { error: { code: 'unauthorized', message: 'no credentials' } }),
    );
    const env = { MKT_SITE_URL: s.url, MKT_CREDENTIAL_STORE: undefined, DBUS_SESSION_BUS_ADDRESS: undefined };
    const signIn = (profile: string) =>
      runMkt(['login', '--with-api-key', '--profile', profile], dir.path, { env, input: 'test_onceKey1\n' });
    const said = (stderr: string) => stderr.match(/No OS keychain answered/g)?.length ?? 0;
    try {
      const [a, b] = await Promise.all([signIn('a'), signIn('b')]);
      expect([a.code, b.code]).toEqual([0, 0]);
      expect(said(a.stderr) + said(b.stderr)).toBe(1);
      for (const profile of ['a', 'b'])
        expect((await runMkt(['logout', '--profile', profile], dir.path, { env })).code).toBe(0);
      const again = await signIn('a');
      expect(again.code).toBe(0);
      expect(said(again.stderr)).toBe(0);
      // Where it lives is still said, by the command that shows it.
      const status = await runMkt(['auth', 'status', '--profile', 'a'], dir.path, { env });
      expect(status.stdout).toMatch(/Source:\s+file \S+credentials\.json \(no OS keychain answered/);
    } finally {
      await s.close();
    }
  });

  it('does not hang when the bus accepts and never answers; the CLI falls back to the file', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createNetServer((socket) => sockets.push(socket));
    const path = join(dir.path, 'silent-bus.sock');
    await new Promise<void>((resolve) => silent.listen(path, resolve));
    const busAddress = `unix:path=${path}`;
    try {
      const store = new AutoStore({
        configDir: dir.path,
        notice: () => undefined,
        keychain: new KeychainStore({ timeoutMs: 300, busAddress }),
      });
      expect((await store.resolve()).kind).toBe('file');
      const s = await startServer((_req, res) =>
        json(res, 401, { error: { code: 'unauthorized', message: 'who?' } }),
      );
      try {
        const r = await runMkt(['api', 'GET', '/whoami'], dir.path, {
          env: { MKT_SITE_URL: s.url, MKT_CREDENTIAL_STORE: undefined, DBUS_SESSION_BUS_ADDRESS: busAddress },
          timeoutMs: 20_000,
        });
        expect(r.signal).toBeNull();
        expect(r.code).toBe(4);
        expect(r.stderr).not.toContain('keychain'); // a read-only command: the fallback is silent
      } finally {
        await s.close();
      }
      expect(sockets.length).toBeGreaterThanOrEqual(2);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });

  it('refuses an unknown MKT_CREDENTIAL_STORE with exit 2', async () => {
    const r = await runMkt(['api', 'GET', '/whoami'], dir.path, { env: { MKT_CREDENTIAL_STORE: 'vault' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('"keychain" or "file"');
  });
});

describe.runIf(process.env.MKT_TEST_KEYCHAIN === '1')(
  'KeychainStore (private D-Bus session with gnome-keyring)',
  () => {
    it('stores, reads and deletes a secret in the Secret Service', async () => {
      const store = new KeychainStore({ busAddress: process.env.DBUS_SESSION_BUS_ADDRESS });
      const account = `test:${process.pid}:${Date.now()}`;
      await store.set(account, 'test_keychainValue');
      expect(await store.get(account)).toBe('test_keychainValue');
      expect(await store.delete(account)).toBe(true);
      expect(await store.get(account)).toBeNull();
    });

    it('is what the CLI chooses when the keychain answers, with no notice and no file', async () => {
      const auto = new AutoStore({
        configDir: dir.path,
        notice: () => undefined,
        busAddress: process.env.DBUS_SESSION_BUS_ADDRESS,
      });
      expect((await auto.resolve()).kind).toBe('keychain');
      const r = await runMkt(['config', 'list'], dir.path, { env: { MKT_CREDENTIAL_STORE: undefined } });
      expect(r.code).toBe(0);
      expect(r.stderr).not.toContain('No OS keychain answered');
      await expect(stat(join(dir.path, 'credentials.json'))).rejects.toThrow();
    });
  },
);

describe('a keychain that appears after the file was used', () => {
  /** A store that is the keychain as far as AutoStore can tell: it answers (in memory). */
  class AnsweringKeychain implements CredentialStore {
    readonly kind = 'keychain';
    readonly location = 'OS keychain';
    readonly secrets = new Map<string, string>();
    readonly reads: string[] = [];
    async get(account: string) {
      this.reads.push(account);
      return this.secrets.get(account) ?? null;
    }
    async set(account: string, secret: string) {
      this.secrets.set(account, secret);
    }
    async delete(account: string) {
      return this.secrets.delete(account);
    }
  }

  it('still finds what the file holds, says so once, and moves it when it is stored again', async () => {
    const folder = await tempDir();
    try {
      const before = new AutoStore({ configDir: folder.path, forced: 'file', notice: () => undefined });
      await before.set('default:oauth', '{"access_token":"at_1"}');
      const notices: string[] = [];
      const keychain = new AnsweringKeychain();
      const after = new AutoStore({ configDir: folder.path, notice: (m) => notices.push(m), keychain });
      expect(await after.get('default:oauth')).toBe('{"access_token":"at_1"}');
      expect(after.kindOf('default:oauth')).toBe('file');
      expect(notices.join('\n')).toContain(
        `A credential is kept in ${join(folder.path, 'credentials.json')}`,
      );
      await after.set('default:oauth', '{"access_token":"at_2"}');
      expect(keychain.secrets.get('default:oauth')).toBe('{"access_token":"at_2"}');
      expect(JSON.parse(await readFile(join(folder.path, 'credentials.json'), 'utf8'))).toEqual({});
      expect(notices.at(-1)).toContain('Moved a credential');
    } finally {
      await folder.remove();
    }
  });

  it("reads a command's first secret as its probe of the keychain: one read, not two", async () => {
    const folder = await tempDir();
    try {
      const keychain = new AnsweringKeychain();
      keychain.secrets.set('default:api-key', '{"key":"test_1"}');
      const auto = new AutoStore({ configDir: folder.path, notice: () => undefined, keychain });
      expect(await auto.get('default:api-key')).toBe('{"key":"test_1"}');
      expect(auto.kind).toBe('keychain');
      expect(await auto.get('default:oauth')).toBeNull();
      expect(keychain.reads).toEqual(['default:api-key', 'default:oauth']);
      // A store before any read still probes first: a secret never goes to the file unasked.
      const storing = new AnsweringKeychain();
      await new AutoStore({ configDir: folder.path, notice: () => undefined, keychain: storing }).set(
        'default:oauth',
        '{"access_token":"at_1"}',
      );
      expect(storing.reads).toEqual(['probe']);
      // MKT_CREDENTIAL_STORE=keychain chooses it without a probe.
      const forced = new AnsweringKeychain();
      await new AutoStore({
        configDir: folder.path,
        forced: 'keychain',
        notice: () => undefined,
        keychain: forced,
      }).set('default:oauth', '{"access_token":"at_1"}');
      expect(forced.reads).toEqual([]);
    } finally {
      await folder.remove();
    }
  });

  it('the file fallback is announced by the command that first stores there, not by every one after', async () => {
    const folder = await tempDir();
    try {
      const notices: string[] = [];
      const first = new AutoStore({
        configDir: folder.path,
        notice: (m) => notices.push(m),
        busAddress: 'unix:path=/nonexistent',
      });
      await first.set('default:api-key', '{"key":"test_1"}');
      const second = new AutoStore({
        configDir: folder.path,
        notice: (m) => notices.push(m),
        busAddress: 'unix:path=/nonexistent',
      });
      await second.set('default:webhook-secret:app_1', 'whsec_1');
      expect(notices.filter((m) => m.includes('No OS keychain answered'))).toHaveLength(1);
    } finally {
      await folder.remove();
    }
  });
});
