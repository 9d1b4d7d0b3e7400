import { expect, it } from 'vitest';
import { Session } from '../../src/auth/session.js';
import { FileStore } from '../../src/credentials/store.js';
import { systemClock } from '../../src/platform/clock.js';
import { tempDir } from '../support/cli.js';

// A command asks for its credential more than once (a check, then each request); with the OS
// keychain each read is a D-Bus connection and a key exchange (~9 ms on Linux: BENCHMARKS.md,
// issue 35), so the session reads each entry once a command.

/** The credential file, noting each account read. */
class NotedStore extends FileStore {
  readonly reads: string[] = [];
  override async get(account: string) {
    this.reads.push(account);
    return super.get(account);
  }
}

const SITE = 'http://127.0.0.1:9';

it('reads the stored key once a command, however often the credential is asked for', async () => {
  const dir = await tempDir();
  try {
    const store = new NotedStore(dir.path);
    await store.set('default:api-key', JSON.stringify({ key: 'test_once', site_url: SITE }));
    const session = new Session({ env: {}, store, profile: 'default', clock: systemClock, siteUrl: SITE });
    for (let i = 0; i < 3; i++) expect((await session.credential())?.secret).toBe('test_once');
    expect(store.reads).toEqual(['default:api-key']);
  } finally {
    await dir.remove();
  }
});

it('reads a stored token once a command, and again (fresh) after a 401', async () => {
  const dir = await tempDir();
  try {
    const store = new NotedStore(dir.path);
    const token = { access_token: 'at_first', token_type: 'Bearer', site_url: SITE };
    await store.set('default:oauth', JSON.stringify(token));
    const session = new Session({
      env: {},
      store,
      profile: 'default',
      clock: systemClock,
      siteUrl: SITE,
      tokenRequest: () => Promise.reject(new Error('not asked in this test')),
    });
    const first = await session.credential();
    expect((await session.credential())?.secret).toBe('at_first');
    expect(store.reads).toEqual(['default:api-key', 'default:oauth']);
    // Another process stored a new token meanwhile: the 401 path reads it, not what was read before.
    await store.set('default:oauth', JSON.stringify({ ...token, access_token: 'at_second' }));
    expect((await session.afterUnauthorized(first!))?.secret).toBe('at_second');
    expect(store.reads).toEqual(['default:api-key', 'default:oauth', 'default:oauth']);
  } finally {
    await dir.remove();
  }
});
