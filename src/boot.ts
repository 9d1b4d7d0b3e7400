// Loads the bundled CLI (dist/mkt.cjs, esbuild.config.js) and, only for the commands that start or
// serve it, the sandbox (dist/sandbox.cjs), each with a V8 code cache, so a run deserialises oclif and
// our code compiled instead of parsing and compiling it again (why not Node's own compile cache:
// docs/DECISIONS.md, compiled-code cache). V8 trusts a code cache as code, and checks only the length
// of the source it was made from, so mkt runs one only when it is its own: in a folder that only this
// user (and root) can change, opened without following links, a file of this user's alone whose first
// line names this very bundle. Anything else, or a cache missing, rejected by V8, unreadable or
// unwritable: the run compiles from source as without it (`--verbose` says why once). No keyed hash:
// its key would sit in the folder it guards, which whoever can plant a cache can also write.
import {
  constants,
  closeSync,
  existsSync,
  fsyncSync,
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
import { createRequire, enableCompileCache } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { completionFiles, parseMeta } from './completion-files.js';

export { commandManifest } from './command-manifest.js';

/** Each bundle's content hash, set by esbuild.config.js: a new build never meets an old cache. */
declare const MKT_BUNDLE_HASHES: Record<BundleName, string>;
type BundleName = 'mkt' | 'sandbox';
const WEEK = 7 * 24 * 3600 * 1000;
/** The first word of a cache file of this layout (the one before began with a keyed hash). */
const FORMAT = 'mkt-code-cache/2';

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
  if (bundles.size === 0) {
    checkFolder();
    if (unsafe && process.argv.includes('--verbose'))
      process.stderr.write(`Not using the compiled-code cache: ${unsafe}; compiling from source.\n`);
    // Node's compile cache (what loads after this) in the same checked folder, never the shared /tmp.
    if (!unsafe) enableCompileCache(join(folder, 'node'));
    // None after V8's flags changed at run time (--jq, src/platform/expression.ts): refused at the next start.
    const changed = () => (globalThis as Record<symbol, unknown>)[Symbol.for('mkt.v8-flags-changed')];
    process.once('exit', () => bundles.forEach((b) => b.grew && !unsafe && !changed() && writeCache(b)));
  }
  const file = join(__dirname, `${which}.cjs`);
  // One cache per bundle, part of the CLI, Node's options, Node and architecture.
  const part = which === 'mkt' ? `-${commandPart()}` : '';
  const name = `${MKT_BUNDLE_HASHES[which]}${part}${optionsTag()}-node${process.version}-${process.arch}`;
  const cached = unsafe ? undefined : readCache(name);
  // The bundle is all ASCII (esbuild.config.js writes every other character as an escape): latin1
  // reads it to the same string without UTF-8's checks, ~0.7 ms sooner for the CLI's 0.7 MB.
  const script = new Script(readFileSync(file, 'latin1'), { filename: file, cachedData: cached?.data });
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

/** Whether the cache folder is this user's alone (`unsafe` undefined), checked once a run. */
function checkFolder(): void {
  if (unsafe === null) unsafe = unsafeFolder();
}

/**
 * The environment variables a help screen's text may depend on: those oclif, its colour checks
 * (supports-color, ansis), debug and mkt read while one is printed, by name, so that no token kept
 * in a variable (NODE_AUTH_TOKEN, CI_JOB_TOKEN, MKT_API_KEY) is among them; their values go into a
 * kept screen's key only as a digest. test/commands/help-cache.test.ts prints help screens, off and
 * on a terminal, with every read recorded and fails on a variable this does not match.
 */
export const HELP_ENV =
  /^(MKT_(BINPATH|CACHE_DIR|CONFIG_DIR|DATA_DIR|DEBUG|DISABLE_THEME|NPM_REGISTRY|S3_BUCKET)|OCLIF_(COLUMNS|DISABLE_RC|NEXT_VERSION)|DEBUG|LC_ALL|LC_COLLATE|LC_MESSAGES|LANG|LANGUAGE|XDG_(CACHE|CONFIG|DATA)_HOME|TERM|TERM_PROGRAM|TERM_PROGRAM_VERSION|COLORTERM|FORCE_COLOR|NO_COLOR|NODE_DISABLE_COLORS|NODE_ENV|NODE_OPTIONS|CI|CI_NAME|TF_BUILD|TEAMCITY_VERSION|TRAVIS|CIRCLECI|APPVEYOR|GITLAB_CI|GITHUB_ACTIONS|BUILDKITE|DRONE|AGENT_NAME|HOME|SHELL|PM2_HOME|NEXT_RUNTIME|__IS_WSL_TEST__)$/;

/**
 * A help screen (`mkt [WORDS…] --help`, or `mkt help [WORDS…]`) printed as this build printed it before
 * for the same terminal and environment, without loading oclif (BENCHMARKS.md). True when printed; else
 * its text is kept for the next run when this one ends with 0 and writes nothing to stderr (`kept`).
 */
export function helpFromCache(args: string[]): boolean {
  const words = args.slice(0, -1);
  if (args.at(-1) === '--help' && words.every((w) => /^[a-z][a-z0-9-]*$/.test(w))) return kept(args, false);
  // `mkt autocomplete [SHELL]`: its instructions, and the completion files it writes once per build
  // (each run rewrote all three shells' files: 2.3x a bare Node). On a terminal its progress on
  // stderr is drawn in time, so only where stderr is no terminal.
  const shell = args.length === 1 || (args.length === 2 && /^(bash|zsh|powershell)$/.test(args[1]!));
  if (args[0] === 'autocomplete' && shell && !process.stderr.isTTY) return kept(args, true);
  return false;
}

/**
 * What a run of ARGS printed before for the same key (written atop the file: all the text depends on),
 * printed again (true); else kept when this run ends with 0 (false). `files`: the run also writes
 * stderr and the completion files, kept with it, printed again only while those files are unchanged.
 */
function kept(args: string[], files: boolean): boolean {
  checkFolder();
  if (unsafe) return false;
  const vars = Object.keys(process.env)
    .filter((k) => HELP_ENV.test(k))
    .sort()
    .map((k) => `${k}=${process.env[k]}`)
    .join('\0');
  // Two different FNV-1a digests: 64 bits, so that another environment is never taken for this one.
  const env = `${fnv(vars)}${fnv(vars, 0x050c5d1f)}`;
  const { stdout, stderr } = process;
  const terminal = [stdout.isTTY ? stdout.columns : 0, stderr.isTTY === true];
  // package.json compared byte for byte with the copy kept after the key (an upgrade may keep file
  // times: cp -p; an FNV digest of it cost ~15 M instructions a kept screen); the manifest as written.
  const pkg = join(__dirname, '..', 'package.json');
  const copy = existsSync(pkg) ? readFileSync(pkg) : Buffer.alloc(0);
  const manifest = statSync(join(__dirname, '..', 'oclif.manifest.json'), { throwIfNoEntry: false });
  const built = [copy.length, manifest && `${manifest.size}@${manifest.mtimeMs}`];
  // A help screen's words, without its `--help`, as before; any other command line with a mark.
  const words = args.at(-1) === '--help' ? args.slice(0, -1) : [...args, '(run)'];
  const key = JSON.stringify([
    MKT_BUNDLE_HASHES.mkt,
    built,
    process.version,
    process.arch,
    words,
    terminal,
    env,
  ]);
  const file = `${MKT_BUNDLE_HASHES.mkt}-help-${fnv(key)}.txt`;
  const saved = readOwn(join(folder, file));
  const eol = saved?.indexOf(10) ?? -1;
  const start = eol + 1 + copy.length;
  if (
    saved &&
    eol >= 0 &&
    saved.subarray(0, eol).toString() === key &&
    copy.equals(saved.subarray(eol + 1, start))
  ) {
    if (!files) {
      stdout.write(saved.subarray(start));
      return true;
    }
    // The line after package.json: what went to stderr, and the completion files as they were left.
    const eol2 = saved.indexOf(10, start);
    const meta = eol2 < 0 ? undefined : parseMeta(saved.subarray(start, eol2).toString());
    if (
      meta &&
      JSON.stringify(completionFiles(join(cacheDir(), 'autocomplete'))) === JSON.stringify(meta.files)
    ) {
      stderr.write(meta.stderr);
      stdout.write(saved.subarray(eol2 + 1));
      return true;
    }
  }
  const out: string[] = [];
  const err: string[] = [];
  let clean = true;
  const write = stdout.write.bind(stdout);
  stdout.write = ((chunk: unknown, ...rest: never[]) => {
    if (typeof chunk === 'string') out.push(chunk);
    else clean = false;
    return write(chunk as string, ...rest);
  }) as typeof stdout.write;
  const writeErr = stderr.write.bind(stderr);
  stderr.write = ((chunk: unknown, ...rest: never[]) => {
    if (files && typeof chunk === 'string') err.push(chunk);
    else clean = false;
    return writeErr(chunk as string, ...rest);
  }) as typeof stderr.write;
  // A process warning names the process (its pid): not to be printed again by another.
  process.once('warning', () => (clean = false));
  process.once('exit', (code) => {
    if (code !== 0 || !clean) return;
    const meta = files
      ? `${JSON.stringify({ stderr: err.join(''), files: completionFiles(join(cacheDir(), 'autocomplete')) })}\n`
      : '';
    writeOwn(file, `${key}\n`, Buffer.concat([copy, Buffer.from(`${meta}${out.join('')}`)]));
  });
  return false;
}

/** FNV-1a of `text` (from `basis`) as 8 hex digits: a name or a digest, never a check against tampering. */
function fnv(text: string, basis = 0x811c9dc5): string {
  let hash = basis;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, '0');
}

/**
 * The part of the CLI this run is, which has a code cache of its own: the command's words as
 * dist/commands has them (`config.get`), `command-help` for any command's help screen, or `help` for
 * the others (and a word that is no command). V8 deserialises a whole cache at each start: one that
 * held every part run so far took 2–6 ms longer than a part's own (BENCHMARKS.md, start-up). The
 * parts share oclif's code, so each holds its own copy of it: about 0.5 MB a part used.
 */
function commandPart(): string {
  const args = process.argv.slice(2);
  const end = args.indexOf('--');
  const help = (end < 0 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
  const id = commandId(args);
  return id && id !== 'help' ? (help ? 'command-help' : id) : 'help';
}

/** The command the leading words name, as dist/commands has it (`config.get`), if they name one. */
function commandId(args: string[]): string | undefined {
  const commands = join(__dirname, 'commands');
  const words: string[] = [];
  for (const word of args) {
    if (!/^[a-z][a-z0-9-]*$/.test(word)) break;
    const path = join(commands, ...words, word);
    if (existsSync(`${path}.js`)) return [...words, word].join('.');
    if (!existsSync(path)) break;
    words.push(word);
  }
  // A topic: its own command (`autocomplete`), else none (its help).
  return words.length && existsSync(join(commands, ...words, 'index.js')) ? words.join('.') : undefined;
}

/**
 * The options Node runs with (its command line and NODE_OPTIONS) as a short tag, '' for none. V8
 * rejects a cache made under other flags: without the tag, two shells that differ by one option (a
 * `--max-old-space-size` in NODE_OPTIONS) replaced each other's cache at every run, ~30 ms each.
 */
function optionsTag(): string {
  const options = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ').trim();
  return options ? `-o${fnv(options)}` : '';
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

/**
 * The cache as written: one line naming it (its bundle's hash, part, Node and architecture) with the
 * module keys it has seen, then V8's data. A file renamed from another bundle's cache is not this one.
 */
function readCache(name: string): { keys: string[]; data: Buffer } | undefined {
  const bytes = readOwn(join(folder, `${name}.v8`));
  const head = `${FORMAT} ${name} `;
  const eol = bytes?.indexOf(10) ?? -1;
  if (!bytes || eol < 0 || bytes.subarray(0, head.length).toString('latin1') !== head) return undefined;
  try {
    const keys: unknown = JSON.parse(bytes.subarray(head.length, eol).toString());
    return Array.isArray(keys) ? { keys, data: bytes.subarray(eol + 1) } : undefined;
  } catch {
    return undefined;
  }
}

/** A bundle's code cache: a line naming it, with the module keys it has seen, then V8's data. */
function writeCache({ script, name, keys }: Loaded): void {
  writeOwn(`${name}.v8`, `${FORMAT} ${name} ${JSON.stringify([...keys])}\n`, script.createCachedData());
}

/**
 * Writes FILE of the cache folder (a head line, then the data) in one rename, so concurrent runs each
 * write whole files, and drops stale ones.
 */
function writeOwn(file: string, head: string, data: Buffer): void {
  const path = join(folder, file);
  const temp = `${path}.${process.pid}.tmp`;
  try {
    // The user's own, like the code it holds: runs load it as they load mkt itself.
    if (unsafe) return;
    const fd = openSync(temp, 'wx', 0o600);
    try {
      writeFileSync(fd, Buffer.concat([Buffer.from(head), data]));
      // On disk before it takes the name: after a crash the file is the old one or the new one whole,
      // never a torn one (V8 checks a code cache's header, not its data).
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
    // Another build's file unwritten for a week: most likely an older mkt's (one in use is rewritten);
    // and the key an older mkt kept for its keyed hash, of no use now.
    for (const entry of readdirSync(folder))
      if (
        entry === 'key' ||
        ((entry.endsWith('.v8') || entry.endsWith('.txt')) &&
          !Object.values(MKT_BUNDLE_HASHES).some((hash) => entry.startsWith(hash)) &&
          statSync(join(folder, entry)).mtimeMs < Date.now() - WEEK)
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
