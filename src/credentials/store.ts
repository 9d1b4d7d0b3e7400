import { closeSync, constants, fchmodSync, fstatSync, lstatSync, readFileSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { systemClock } from '../platform/clock.js';
import { openNoFollowSync, writeFileAtomic } from '../platform/fs-atomic.js';
import { withFileLock } from '../platform/lock-file.js';
import { MktError, UsageError } from '../errors.js';
import { requireCommonJs } from '../platform/commonjs.js';
import { sessionBusAnswers } from './dbus-probe.js';

/** Where secrets live: the OS keychain, or an owner-only file where no keychain answers. */
export interface CredentialStore {
  readonly kind: 'keychain' | 'file';
  /** Human description of the place, for `auth status` and notices. */
  readonly location: string;
  get(account: string): Promise<string | null>;
  set(account: string, secret: string): Promise<void>;
  delete(account: string): Promise<boolean>;
}

const SERVICE = 'mkt';
/** A keychain that does not answer within this time is treated as absent: the CLI never hangs on it. */
const KEYCHAIN_TIMEOUT_MS = 5000;

/** Raised when the OS keychain cannot be used (no Secret Service, locked, timed out). */
class KeychainUnavailableError extends MktError {
  constructor(detail: string) {
    super('keychain_unavailable', `The OS keychain is not available: ${detail}`, 1, {
      hints: ['MKT_CREDENTIAL_STORE=file mkt …   (store credentials in an owner-only file instead)'],
    });
  }
}

/** The OS keychain through @napi-rs/keyring; on Linux pinned to the Secret Service (never the kernel keyring). */
export class KeychainStore implements CredentialStore {
  readonly kind = 'keychain';
  readonly location = 'OS keychain';

  private readonly timeoutMs: number;
  private readonly busAddress: string | undefined;

  constructor(options: { timeoutMs?: number; busAddress?: string } = {}) {
    this.timeoutMs = options.timeoutMs ?? KEYCHAIN_TIMEOUT_MS;
    this.busAddress = options.busAddress;
  }

  private busChecked = false;

  private async call<T>(
    account: string,
    op: (entry: import('@napi-rs/keyring').AsyncEntry, signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    if (process.platform === 'linux' && !this.busChecked) {
      if (!(await sessionBusAnswers(this.busAddress, this.timeoutMs))) {
        throw new KeychainUnavailableError('no D-Bus session bus answered (is a Secret Service running?)');
      }
      this.busChecked = true;
    }
    const { AsyncEntry } = requireCommonJs<typeof import('@napi-rs/keyring')>('@napi-rs/keyring');
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new KeychainUnavailableError(`no answer within ${this.timeoutMs / 1000} s`));
      }, this.timeoutMs);
      timer.unref();
    });
    try {
      const entry = new AsyncEntry(SERVICE, account, { linux: { store: 'secret-service' } });
      return await Promise.race([op(entry, controller.signal), timeout]);
    } catch (err) {
      if (err instanceof KeychainUnavailableError) throw err;
      throw new KeychainUnavailableError((err as Error).message);
    } finally {
      clearTimeout(timer);
    }
  }

  get(account: string): Promise<string | null> {
    return this.call(account, (e, signal) => e.getPassword(signal));
  }

  set(account: string, secret: string): Promise<void> {
    return this.call(account, (e, signal) => e.setPassword(secret, signal));
  }

  delete(account: string): Promise<boolean> {
    return this.call(account, (e, signal) => e.deleteCredential(signal));
  }
}

/** An owner-only JSON file (0600 in a 0700 folder) for machines without a keychain. */
export class FileStore implements CredentialStore {
  readonly kind = 'file';
  readonly file: string;
  readonly location: string;
  private readonly lock: string;
  /** Marks that the fallback to this file was announced (firstNotice). */
  private readonly noticeFile: string;

  constructor(dir: string) {
    this.file = join(dir, 'credentials.json');
    this.location = this.file;
    this.lock = join(dir, 'locks', 'credentials.lock');
    this.noticeFile = join(dir, 'credentials-notice-given');
  }

  private async load(): Promise<Record<string, string>> {
    let text: string;
    try {
      // O_NOFOLLOW: a symbolic link planted here is refused, never read, chmod-ed or written through.
      // Read at once (as the config file): node:fs/promises costs ~1.8 ms of a start to load.
      const fd = openNoFollowSync(this.file, constants.O_RDONLY, 'credentials_symlink');
      try {
        const info = fstatSync(fd);
        // Someone loosened the permissions: tighten them again rather than leave secrets readable.
        if (process.platform !== 'win32' && (info.mode & 0o077) !== 0) fchmodSync(fd, 0o600);
        text = readFileSync(fd, 'utf8');
      } finally {
        closeSync(fd);
      }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return {};
      if (code === 'ELOOP' || (lstatSync(this.file, { throwIfNoEntry: false })?.isSymbolicLink() ?? false))
        throw this.symlinkError();
      throw new MktError('credentials_unreadable', `Cannot read ${this.file}: ${(err as Error).message}`);
    }
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        throw new Error('not an object');
      if (Object.values(parsed).some((v) => typeof v !== 'string')) throw new Error('values must be strings');
      return parsed as Record<string, string>;
    } catch (err) {
      throw new MktError(
        'credentials_corrupt',
        `The credentials file ${this.file} is not valid (${(err as Error).message}). It was left as it is.`,
        1,
        { hints: [`Move it aside and sign in again: mv "${this.file}" "${this.file}.bak" && mkt login`] },
      );
    }
  }

  private symlinkError(): MktError {
    return new MktError(
      'credentials_symlink',
      `${this.file} is a symbolic link; mkt keeps secrets only in a regular file of its own and changed nothing.`,
      1,
      { hints: [`ls -l "${this.file}"   (then remove the link: rm "${this.file}")`] },
    );
  }

  async get(account: string): Promise<string | null> {
    return (await this.load())[account] ?? null;
  }

  /**
   * True the first time it is asked for this config folder, false ever after: whether the fallback
   * to this file is still to be announced. Remembered in a file beside it, under the credential lock,
   * so that two commands storing at once announce it once between them.
   */
  async firstNotice(): Promise<boolean> {
    return withFileLock(
      this.lock,
      systemClock,
      async () => {
        if (
          await lstat(this.noticeFile).then(
            () => true,
            () => false,
          )
        )
          return false;
        await writeFileAtomic(this.noticeFile, `${new Date().toISOString()}\n`, {
          mode: 0o600,
          dirMode: 0o700,
        });
        return true;
      },
      { waitMs: 60_000 },
    );
  }

  async set(account: string, secret: string): Promise<void> {
    await this.change((all) => {
      if (all[account] === secret) return false;
      all[account] = secret;
      return true;
    });
  }

  async delete(account: string): Promise<boolean> {
    return this.change((all) => account in all && delete all[account]);
  }

  /**
   * Read, change, write under the credential lock, read again once held, so that parallel sign-ins
   * keep each other's secrets; nothing is written when `update` changed nothing. When a first read
   * shows that it would change nothing (a key stored again, an absent entry deleted), the lock is not
   * taken: as if the change came just before any other.
   */
  private async change(update: (all: Record<string, string>) => boolean): Promise<boolean> {
    if (!update(await this.load())) return false;
    return withFileLock(
      this.lock,
      systemClock,
      async () => {
        const all = await this.load();
        if (!update(all)) return false;
        await writeFileAtomic(this.file, JSON.stringify(all, null, 2) + '\n', {
          mode: 0o600,
          dirMode: 0o700,
        });
        return true;
      },
      { waitMs: 60_000 },
    );
  }
}

/**
 * Chooses the store on first use: MKT_CREDENTIAL_STORE forces one; otherwise the keychain when it
 * answers, else the file, announced (through `notice`) by the first command that stores a secret there.
 */
export class AutoStore implements CredentialStore {
  private chosen: CredentialStore | undefined;
  private announced = false;
  /** Accounts found in the file while the keychain is in use (stored before a keychain answered). */
  private readonly inFile = new Set<string>();

  constructor(
    private readonly options: {
      configDir: string;
      forced?: string;
      /** DBUS_SESSION_BUS_ADDRESS, where the Secret Service is reached on Linux. */
      busAddress?: string;
      notice: (message: string) => void;
      keychain?: CredentialStore;
    },
  ) {
    const forced = options.forced;
    if (forced !== undefined && forced !== '' && forced !== 'keychain' && forced !== 'file') {
      throw new UsageError(`MKT_CREDENTIAL_STORE must be "keychain" or "file", not "${forced}".`);
    }
  }

  get kind() {
    return this.chosen?.kind ?? 'keychain';
  }

  get location() {
    return this.chosen?.location ?? 'OS keychain';
  }

  /** The store in use, probing the keychain the first time. */
  async resolve(): Promise<CredentialStore> {
    return this.settled() ?? (await this.read('probe')).store;
  }

  /** The store chosen, or the one MKT_CREDENTIAL_STORE forces; undefined until a read decides. */
  private settled(): CredentialStore | undefined {
    const { forced, configDir } = this.options;
    if (!this.chosen && forced === 'file') this.chosen = new FileStore(configDir);
    if (!this.chosen && forced === 'keychain') this.chosen = this.keychain();
    return this.chosen;
  }

  private keychain(): CredentialStore {
    return this.options.keychain ?? new KeychainStore({ busAddress: this.options.busAddress });
  }

  /**
   * `account` read from the store in use. The first read chooses it: the keychain when it answers
   * (the read itself is the probe: on Linux each keychain entry costs a D-Bus connection and a
   * key exchange, ~9 ms a command), else the file.
   */
  private async read(account: string): Promise<{ store: CredentialStore; value: string | null }> {
    const settled = this.settled();
    if (settled) return { store: settled, value: await settled.get(account) };
    const keychain = this.keychain();
    try {
      const value = await keychain.get(account);
      return { store: (this.chosen = keychain), value };
    } catch (err) {
      if (!(err instanceof KeychainUnavailableError)) throw err;
      this.chosen = new FileStore(this.options.configDir);
      return { store: this.chosen, value: await this.chosen.get(account) };
    }
  }

  /**
   * The secret, from the store in use; with the keychain, what an earlier run stored in the file
   * (when no keychain answered) is still found there, and said once.
   */
  async get(account: string) {
    const { store, value } = await this.read(account);
    if (value !== null || store.kind !== 'keychain' || this.options.forced === 'keychain') return value;
    const file = new FileStore(this.options.configDir);
    const stored = await file.get(account);
    if (stored !== null) {
      this.inFile.add(account);
      this.options.notice(
        `A credential is kept in ${file.location} (stored when no OS keychain answered); it is read from there until it is stored again.`,
      );
    }
    return stored;
  }
  /** Where `account` was found: "file" for one still in the file while the keychain is in use. */
  kindOf(account: string): 'keychain' | 'file' {
    return this.inFile.has(account) ? 'file' : this.kind;
  }
  async set(account: string, secret: string) {
    const store = await this.resolve();
    await store.set(account, secret);
    if (this.inFile.delete(account)) {
      // Moved: the keychain now holds it, and the file copy would only go stale.
      await new FileStore(this.options.configDir).delete(account);
      this.options.notice(
        `Moved a credential from ${new FileStore(this.options.configDir).location} to the ${store.location}.`,
      );
    }
    // A file chosen with MKT_CREDENTIAL_STORE=file is the user's own decision; a fallback is announced
    // by the first command that stores there for this config folder, not again (`auth status` says it).
    if (store.kind === 'file' && this.options.forced !== 'file' && !this.announced) {
      this.announced = true;
      if (await (store as FileStore).firstNotice())
        this.options.notice(
          `No OS keychain answered: stored in ${store.location} (readable only by you). Set MKT_CREDENTIAL_STORE=keychain or =file to choose.`,
        );
    }
  }
  async delete(account: string) {
    const store = await this.resolve();
    const deleted = await store.delete(account);
    // With the keychain in use, a copy stored in the file earlier is forgotten too.
    if (store.kind !== 'keychain' || this.options.forced === 'keychain') return deleted;
    this.inFile.delete(account);
    return (await new FileStore(this.options.configDir).delete(account)) || deleted;
  }
}
