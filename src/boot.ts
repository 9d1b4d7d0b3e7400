// Loads the bundled CLI (dist/mkt.cjs, esbuild.config.js) with a V8 code cache, so a run
// deserialises oclif and our code compiled instead of parsing and compiling it again (Node 20 has no
// compile cache of its own; BENCHMARKS.md, start-up). The cache is only ever a shortcut: missing,
// rejected by V8, unreadable or unwritable, the run compiles from source as without it.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';

/** The bundle's content hash, set by esbuild.config.js: a new build never meets an old cache. */
declare const MKT_BUNDLE_HASH: string;
const WEEK = 7 * 24 * 3600 * 1000;

interface Bundle {
  load(key: string): { default: unknown };
}

// Bundled as CommonJS into dist/boot.js (dist/package.json), beside the bundle.
const file = join(__dirname, 'mkt.cjs');
// One cache per bundle, Node and architecture (V8 also rejects a cache from other V8 flags).
const cacheFile = join(
  cacheDir(),
  'code-cache',
  `${MKT_BUNDLE_HASH}-node${process.version}-${process.arch}.v8`,
);
const cached = readCache();
const script = new Script(readFileSync(file, 'utf8'), { filename: file, cachedData: cached?.data });
const module = { exports: {} as Bundle };
const require = createRequire(file);
// The bundle's import(): from here, beside it; Node's own modules as require gives them (no ESM facade).
const importer = (specifier: string) =>
  specifier.startsWith('node:') ? Promise.resolve(require(specifier)) : import(specifier);
(script.runInThisContext() as (...args: unknown[]) => void)(
  module.exports,
  require,
  module,
  file,
  dirname(file),
  importer,
);
const loaded = new Set(cached?.keys);
let grew = !cached || script.cachedDataRejected === true;
// Written when the run ends, so the cache holds what it compiled on the way (including functions
// V8 compiles only when first called), and again when a run used a part the cache has not seen.
process.once('exit', () => {
  if (grew) writeCache();
});

/** The default export of one of the bundle's modules ('oclif', 'help', 'commands/whoami', …). */
export function loadModule(key: string): unknown {
  if (!loaded.has(key)) {
    loaded.add(key);
    grew = true;
  }
  return module.exports.load(key).default;
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

/** The cache as written: a line of the module keys it has seen, then V8's data. */
function readCache(): { keys: string[]; data: Buffer } | undefined {
  try {
    const bytes = readFileSync(cacheFile);
    const eol = bytes.indexOf(10);
    const keys: unknown = JSON.parse(bytes.subarray(0, eol).toString());
    return Array.isArray(keys) ? { keys, data: bytes.subarray(eol + 1) } : undefined;
  } catch {
    return undefined;
  }
}

/** Replaces the cache in one rename (concurrent runs each write whole files) and drops stale ones. */
function writeCache(): void {
  const dir = dirname(cacheFile);
  const temp = `${cacheFile}.${process.pid}.tmp`;
  try {
    // The user's own, like the code it holds: runs load it as they load mkt itself.
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(
      temp,
      Buffer.concat([Buffer.from(`${JSON.stringify([...loaded])}\n`), script.createCachedData()]),
      { mode: 0o600 },
    );
    renameSync(temp, cacheFile);
    // Another build's cache unwritten for a week: most likely an older mkt's (one in use is rewritten).
    for (const name of readdirSync(dir))
      if (
        name.endsWith('.v8') &&
        !name.startsWith(MKT_BUNDLE_HASH) &&
        statSync(join(dir, name)).mtimeMs < Date.now() - WEEK
      )
        rmSync(join(dir, name), { force: true });
  } catch {
    try {
      rmSync(temp, { force: true });
    } catch {
      // an unwritable cache folder: nothing was left there either
    }
  }
}
