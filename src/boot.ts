// Loads the bundled CLI (dist/mkt.cjs, esbuild.config.js) and, only for the commands that start or
// serve it, the sandbox (dist/sandbox.cjs), each with a V8 code cache, so a run deserialises oclif and
// our code compiled instead of parsing and compiling it again (why not Node's own compile cache:
// docs/DECISIONS.md, compiled-code cache). V8 trusts a code cache as code, and checks only the length
// of the source it was made from, so mkt runs one only when it is its own: in a folder that only this
// user (and root) can change, opened without following links, and carrying a keyed hash (a secret key
// kept beside it) of this bundle's hash and the cache's bytes. Anything else, or a cache missing,
// rejected by V8, unreadable or unwritable: the run compiles from source as without it (`--verbose`
// says why once).
import {
  constants,
  closeSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createRequire, enableCompileCache } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';

/** Each bundle's content hash, set by esbuild.config.js: a new build never meets an old cache. */
declare const MKT_BUNDLE_HASHES: Record<BundleName, string>;
type BundleName = 'mkt' | 'sandbox';
const WEEK = 7 * 24 * 3600 * 1000;
const MAC_HEX = 64;

interface Loaded {
  script: Script;
  name: string;
  exports: Record<string, unknown>;
  /** The module keys this run used, and whether the cache lacks some of them (written at exit). */
  keys: Set<string>;
  grew: boolean;
}

// Bundled as CommonJS into dist/boot.js (dist/package.json), beside the bundles.
const folder = join(cacheDir(), 'code-cache');
let unsafe: string | undefined | null = null;
const bundles = new Map<BundleName, Loaded>();

/** The default export of one of the CLI bundle's modules ('oclif', 'help', 'commands/whoami', …). */
export function loadModule(key: string): unknown {
  const mkt = bundle('mkt');
  if (!mkt.keys.has(key)) {
    mkt.keys.add(key);
    mkt.grew = true;
  }
  return (mkt.exports as { load(key: string): { default: unknown } }).load(key).default;
}

/** The sandbox (dist/sandbox.cjs: its server, storage, console): what `startSandbox` comes from. */
export function loadSandbox(): Record<string, unknown> {
  return bundle('sandbox').exports;
}

/** Runs dist/NAME.cjs once, from its code cache when there is a good one. */
function bundle(which: BundleName): Loaded {
  const known = bundles.get(which);
  if (known) return known;
  if (unsafe === null) {
    unsafe = unsafeFolder();
    if (unsafe && process.argv.includes('--verbose'))
      process.stderr.write(`Not using the compiled-code cache: ${unsafe}; compiling from source.\n`);
    // Node keeps what loads after this (the commands' entry files, undici, the prompts) compiled in the
    // same checked folder: never in its default, the shared temporary folder.
    if (!unsafe) enableCompileCache(join(folder, 'node'));
    process.once('exit', () => {
      for (const loaded of bundles.values()) if (loaded.grew) writeCache(loaded);
    });
  }
  const file = join(__dirname, `${which}.cjs`);
  // One cache per bundle, Node and architecture (V8 also rejects a cache from other V8 flags).
  const name = `${MKT_BUNDLE_HASHES[which]}-node${process.version}-${process.arch}`;
  const cached = unsafe ? undefined : readCache(name);
  const script = new Script(readFileSync(file, 'utf8'), { filename: file, cachedData: cached?.data });
  const module = { exports: {} as Record<string, unknown> };
  const require = createRequire(file);
  // The bundle's import(): from here, beside it; Node's own modules as require gives them (no ESM
  // facade). The CLI's bundle takes the sandbox's through loadSandbox (its own code cache).
  const importer = (specifier: string) =>
    specifier.startsWith('node:') ? Promise.resolve(require(specifier)) : import(specifier);
  const loaded: Loaded = {
    script,
    name,
    exports: module.exports,
    keys: new Set(cached?.keys),
    // Written when the run ends, so the cache holds what it compiled on the way (including functions
    // V8 compiles only when first called), and again when a run used a part the cache has not seen.
    grew: !cached || script.cachedDataRejected === true,
  };
  bundles.set(which, loaded);
  (script.runInThisContext() as (...args: unknown[]) => void)(
    module.exports,
    require,
    module,
    file,
    dirname(file),
    importer,
    loadSandbox,
  );
  loaded.exports = module.exports;
  return loaded;
}

/** mkt's cache folder, where oclif puts it (Config.cacheDir: MKT_CACHE_DIR, XDG, per platform). */
function cacheDir(): string {
  const env = process.env;
  const home = env.HOME || homedir();
  if (env.MKT_CACHE_DIR) return env.MKT_CACHE_DIR;
  if (process.platform === 'darwin') return join(home, 'Library', 'Caches', 'mkt');
  const base =
    env.XDG_CACHE_HOME || (process.platform === 'win32' && env.LOCALAPPDATA) || join(home, '.cache');
  return join(base, 'mkt');
}

/**
 * Why the folder holding the cache could be changed by someone else (undefined: it cannot). The
 * cache folder and mkt's folder above it must be this user's and writable by no one else; every
 * folder above them this user's or root's, writable by others only with the sticky bit (as /tmp).
 */
function unsafeFolder(): string | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined; // Windows: a user's profile folders are their own
  let dir: string;
  try {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    dir = realpathSync(folder);
  } catch (err) {
    return `${folder} cannot be made (${(err as NodeJS.ErrnoException).code})`;
  }
  for (let depth = 0; ; depth++) {
    const info = lstatSync(dir);
    const own = depth < 2 ? info.uid === uid : info.uid === uid || info.uid === 0;
    if (!own) return `${dir} belongs to another user (uid ${info.uid})`;
    if (info.mode & 0o022 && (depth < 2 || !(info.mode & 0o1000)))
      return `${dir} is writable by others (mode ${(info.mode & 0o7777).toString(8)})`;
    if (dir === dirname(dir)) return undefined;
    dir = dirname(dir);
  }
}

/** A file of the cache folder, never through a link, only if it is this user's alone; else undefined. */
function readOwn(path: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    const info = fstatSync(fd);
    const uid = process.getuid?.();
    if (!info.isFile() || (uid !== undefined && (info.uid !== uid || info.mode & 0o022))) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The keyed hash binding a cache to this bundle, Node and architecture. */
function mac(name: string, key: Buffer, keys: string, data: Buffer): Buffer {
  return createHmac('sha256', key).update(`${name}\n${keys}\n`).update(data).digest();
}

/** The cache as written: its keyed hash and the module keys it has seen on one line, then V8's data. */
function readCache(name: string): { keys: string[]; data: Buffer } | undefined {
  const bytes = readOwn(join(folder, `${name}.v8`));
  const key = readOwn(join(folder, 'key'));
  if (!bytes || key?.length !== 32) return undefined;
  const eol = bytes.indexOf(10);
  if (eol <= MAC_HEX) return undefined;
  const line = bytes.subarray(MAC_HEX + 1, eol).toString();
  const data = bytes.subarray(eol + 1);
  const expected = Buffer.from(bytes.subarray(0, MAC_HEX).toString(), 'hex');
  if (expected.length !== 32 || !timingSafeEqual(expected, mac(name, key, line, data))) return undefined;
  try {
    const keys: unknown = JSON.parse(line);
    return Array.isArray(keys) ? { keys, data } : undefined;
  } catch {
    return undefined;
  }
}

/** The secret key of the cache folder, made on first use (32 random bytes, this user's only). */
function ownKey(): Buffer {
  const path = join(folder, 'key');
  try {
    writeFileSync(path, randomBytes(32), { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const key = readOwn(path);
  if (key?.length !== 32) throw new Error(`${path} is not a key of this user's`);
  return key;
}

/** Replaces the cache in one rename (concurrent runs each write whole files) and drops stale ones. */
function writeCache({ script, name, keys: used }: Loaded): void {
  const cacheFile = join(folder, `${name}.v8`);
  const temp = `${cacheFile}.${process.pid}.tmp`;
  try {
    // The user's own, like the code it holds: runs load it as they load mkt itself.
    if (unsafe) return;
    const keys = JSON.stringify([...used]);
    const data = script.createCachedData();
    const header = `${mac(name, ownKey(), keys, data).toString('hex')} ${keys}\n`;
    writeFileSync(temp, Buffer.concat([Buffer.from(header), data]), { mode: 0o600, flag: 'wx' });
    renameSync(temp, cacheFile);
    // Another build's cache unwritten for a week: most likely an older mkt's (one in use is rewritten).
    for (const entry of readdirSync(folder))
      if (
        entry.endsWith('.v8') &&
        !Object.values(MKT_BUNDLE_HASHES).some((hash) => entry.startsWith(hash)) &&
        statSync(join(folder, entry)).mtimeMs < Date.now() - WEEK
      )
        rmSync(join(folder, entry), { force: true });
  } catch {
    try {
      rmSync(temp, { force: true });
    } catch {
      // an unwritable cache folder: nothing was left there either
    }
  }
}
