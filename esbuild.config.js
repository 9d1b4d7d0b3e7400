// The CLI as it runs (npm run build: tsc writes build/, this bundles it into dist/, then `oclif
// manifest`). oclif finds commands and hooks by path under dist/ as before; each is a one-line
// CommonJS module that takes its class from one CommonJS bundle (dist/mkt.cjs: oclif, the help and
// autocomplete plugins as the root plugin's commands, our code), in which each module is evaluated
// only when first loaded. The sandbox (server, storage, console, Hono, zod, node:sqlite) is a bundle
// of its own (dist/sandbox.cjs), loaded only by `mkt sandbox start`: no other command parses it.
// src/boot.ts runs both with a V8 code cache. Each bundle's metafile goes to build/NAME.meta.json
// (test/commands/bundles.test.ts reads it). Why and how much: BENCHMARKS.md (start-up).
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { honoPatches } from './build/platform/hono-patches.js';
import { oclifPatches } from './build/platform/oclif-patches.js';

const require = createRequire(import.meta.url);
const oclif = JSON.parse(readFileSync('package.json', 'utf8')).oclif;
// Each plugin's entry is its lib/index.js.
const plugin = (name, file) => join(dirname(require.resolve(name)), '..', file);

// What oclif loads by path (its `dist/...` name: the file it comes from), one module each.
const modules = {
  oclif: require.resolve('@oclif/core'),
  'commands/help': plugin('@oclif/plugin-help', 'lib/commands/help.js'),
  'commands/autocomplete/index': plugin('@oclif/plugin-autocomplete', 'lib/commands/autocomplete/index.js'),
  'commands/autocomplete/create': plugin('@oclif/plugin-autocomplete', 'lib/commands/autocomplete/create.js'),
  'commands/autocomplete/script': plugin('@oclif/plugin-autocomplete', 'lib/commands/autocomplete/script.js'),
};
for (const file of readdirSync('build/commands', { recursive: true }))
  if (file.endsWith('.js')) modules[join('commands', file.slice(0, -3))] = join('build/commands', file);
// Hooks and a help class of our own, named in package.json under ./dist/, come from build/.
for (const path of [oclif.helpClass, ...Object.values(oclif.hooks ?? {}).flat()])
  if (typeof path === 'string' && existsSync(path.replace('./dist/', 'build/')))
    modules[path.replace(/^\.\/dist\/|\.js$/g, '')] = path.replace('./dist/', 'build/');

/** A module object that loads the module on first use (in the bundle's banner: see lazy-oclif). */
function __mktLazy(load) {
  let module;
  const real = () => (module ??= load());
  return new Proxy(
    {},
    {
      get: (_, key) => real()[key],
      set: (_, key, value) => ((real()[key] = value), true),
      has: (_, key) => key in real(),
      ownKeys: () => Reflect.ownKeys(real()),
      getOwnPropertyDescriptor: (_, key) => {
        const descriptor = Reflect.getOwnPropertyDescriptor(real(), key);
        return descriptor && { ...descriptor, configurable: true };
      },
    },
  );
}

// oclif's steps replaced by cheaper ones that give the same (src/platform/oclif-patches.ts; why:
// BENCHMARKS.md, start-up); test/commands/oclif-patches.test.ts fails when a patched text is gone.
// bench/oclif-patches.js builds without some of them (MKT_BUILD_WITHOUT_PATCHES: files, comma-separated).
const without = new Set((process.env.MKT_BUILD_WITHOUT_PATCHES ?? '').split(','));
const patches = Object.fromEntries(
  Object.entries({ ...oclifPatches(), ...honoPatches() }).filter(([file]) => !without.has(file)),
);
/** One of these files with its patches applied; fails the build if a patched text is gone. */
function patched(path, contents) {
  const file = Object.keys(patches).find((f) => path.replaceAll('\\', '/').endsWith(`/node_modules/${f}`));
  for (const [from, to] of file ? patches[file] : []) {
    if (!contents.includes(from)) throw new Error(`esbuild.config.js: ${path} no longer has ${from}`);
    contents = contents.replaceAll(from, to);
  }
  return contents;
}

/** hono/jsx without its AsyncLocalStorage (src/platform/hono-patches.ts), in both bundles. */
const honoJsx = {
  name: 'hono-jsx',
  setup(b) {
    b.onLoad({ filter: /[\\/]hono[\\/]dist[\\/]jsx[\\/]context\.js$/ }, async (args) => ({
      contents: patched(args.path, await readFile(args.path, 'utf8')),
      loader: 'js',
    }));
  },
};

/** The sandbox's entry, which only `mkt sandbox start` imports: in the CLI's bundle, a call to boot. */
const sandboxApart = {
  name: 'sandbox-apart',
  setup(b) {
    b.onResolve({ filter: /[\\/]sandbox[\\/]start-sandbox\.js$/ }, () => ({
      path: 'sandbox',
      namespace: 'sandbox-apart',
    }));
    b.onLoad({ filter: /.*/, namespace: 'sandbox-apart' }, () => ({
      contents: 'module.exports = __mktSandbox();',
    }));
  },
};

/**
 * `specifier`, imported by the CLI's modules under `from`, evaluated on first use. Its export names are
 * given up front: the bundle's ESM interop copies them as getters, which load nothing until read.
 */
function lazyModule(specifier, from) {
  const namespace = `lazy:${specifier}`;
  return {
    name: namespace,
    setup(b) {
      const filter = new RegExp(`^${specifier}$`);
      b.onResolve({ filter }, (args) =>
        args.importer.includes(from) ? { path: specifier, namespace } : undefined,
      );
      b.onLoad({ filter: /.*/, namespace }, async () => ({
        contents: `let real;
const load = () => (real ??= require(${JSON.stringify(specifier.startsWith('node:') ? specifier : require.resolve(specifier))}));
module.exports = new Proxy({}, {
  get: (_, key) => load()[key],
  ownKeys: () => ${JSON.stringify(Object.keys(await import(specifier)))},
  getOwnPropertyDescriptor: () => ({ enumerable: true, configurable: true, writable: false, value: undefined }),
});`,
        resolveDir: process.cwd(),
      }));
    },
  };
}

rmSync('dist', { recursive: true, force: true });
mkdirSync('dist', { recursive: true });
const hashes = {};
const sizes = [];
/**
 * Bundles `options` into dist/NAME.cjs as the function src/boot.ts calls (a CommonJS script is what
 * V8 can cache compiled); records its hash, so that the hash covers every byte V8 compiles.
 */
async function script(name, options) {
  const bundle = await build({
    ...options,
    outfile: `dist/${name}.cjs`,
    write: false,
    metafile: true,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node22',
    // Without the indentation and comments each start reads and decodes 0.3 MB less, and V8 parses
    // less for what the code cache lacks (3-5 ms a start: BENCHMARKS.md, start-up). Names are kept,
    // so a stack still names its functions.
    minifyWhitespace: true,
    legalComments: 'none',
    // Our modules find package.json from their own URL: the bundle's, one level below it.
    define: { 'import.meta.url': '__mktUrl' },
    banner: {
      js: ["const __mktUrl = require('node:url').pathToFileURL(__filename).href;", __mktLazy.toString()].join(
        '\n',
      ),
    },
    logLevel: 'warning',
  });
  const [{ text }] = bundle.outputFiles;
  // import() in a script run by node:vm needs a callback that Node 20 only has as an experimental
  // feature (which warns): src/boot.ts passes the bundle its own import instead.
  // Non-ASCII written as escapes (esbuild leaves a regular expression's as they are: one in ansis):
  // a bundle all ASCII is a one-byte string to V8, half the memory of the two-byte string that a
  // single other character makes of the whole text.
  const code = text
    .replaceAll('await import(', 'await __mktImport(')
    .replace(/[^ -~\t\n\r]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (/(?<!["`])\bimport\(/.test(code))
    throw new Error(`dist/${name}.cjs: an import() that src/boot.ts does not pass`);
  const wrapped = `(function (exports, require, module, __filename, __dirname, __mktImport, __mktSandbox) {${code}\n})`;
  hashes[name] = createHash('sha256').update(wrapped).digest('hex').slice(0, 16);
  writeFileSync(`dist/${name}.cjs`, wrapped);
  writeFileSync(`build/${name}.meta.json`, JSON.stringify(bundle.metafile));
  sizes.push(`dist/${name}.cjs ${(Buffer.byteLength(wrapped) / 1024).toFixed(0)} KB`);
}

// One bundle of everything oclif loads, each module evaluated when first loaded.
const entry = `const modules = {${Object.entries(modules)
  .map(([key, path]) => `${JSON.stringify(key)}: () => require(${JSON.stringify(resolve(path))})`)
  .join(',\n')}};
exports.load = (key) => (key === 'oclif' ? { default: modules.oclif() } : modules[key]());`;
await script('mkt', {
  stdin: { contents: entry, resolveDir: process.cwd(), sourcefile: 'mkt-entry.js' },
  // Loaded on demand from node_modules as before (docs/CONTRIBUTING.md: heavy modules).
  external: [
    ...['@inquirer/prompts', '@napi-rs/keyring', 'open', 'undici', 'typescript', 'jq-wasm'],
    // oclif's dependencies that a run with a manifest never reaches (globbing for commands, plugin
    // patterns, version ranges, config files, spinners): not parsed at each start, loaded if used.
    ...['tinyglobby', 'minimatch', 'semver', 'lilconfig', 'cli-spinners'],
  ],
  plugins: [
    {
      // oclif's modules require each other at the top (~160 of them, and Node built-ins such as
      // perf_hooks): each is evaluated when first used instead, which most runs never do.
      name: 'lazy-oclif',
      setup(b) {
        b.onLoad({ filter: /[\\/]@oclif[\\/]core[\\/]lib[\\/].*\.js$/ }, async (args) => ({
          contents: patched(args.path, await readFile(args.path, 'utf8'))
            .replace(
              /^(const|var) (\w+) = ((?:__importDefault|__importStar)\()?(require\("[^"]+"\))\)?;$/gm,
              (_, kind, name, wrap, req) =>
                `${kind} ${name} = __mktLazy(() => ${wrap ? `${wrap}${req})` : req});`,
            )
            .replace(
              /^exports\.(\w+) = (__importStar\(require\("[^"]+"\)\));$/gm,
              (_, name, value) => `exports.${name} = __mktLazy(() => ${value});`,
            )
            // It checks Node against oclif's own engines (>=18) through __dirname, which a bundle
            // does not have; npm checks ours (>=22.13) at install, bin/run.js at every start.
            .replace(/^checkNodeVersion\(\);$/m, ''),
          loader: 'js',
        }));
      },
    },
    {
      // `debug` (with tty, supports-color) only when DEBUG asks for output; otherwise silent loggers.
      name: 'lazy-debug',
      setup(b) {
        b.onResolve({ filter: /^debug$/ }, () => ({ path: 'debug', namespace: 'lazy-debug' }));
        b.onLoad({ filter: /.*/, namespace: 'lazy-debug' }, () => ({
          contents:
            "module.exports = process.env.DEBUG ? require('debug/src/index.js') : () => Object.assign(() => {}, { enabled: false });",
          resolveDir: process.cwd(),
        }));
      },
    },
    // chalk (with supports-color and node:tty) only when colour is on, which a run whose output is
    // not a terminal never asks (src/output/colour.ts); node:crypto (≈ 3 ms) only for what signs,
    // verifies or draws random bytes, and node:fs/promises (≈ 1.8 ms) only for what writes or
    // watches: not for every command whose module graph reaches such code.
    lazyModule('chalk', join(process.cwd(), 'build', 'output')),
    lazyModule('node:crypto', join(process.cwd(), 'build')),
    lazyModule('node:fs/promises', join(process.cwd(), 'build')),
    {
      // A Node built-in a dependency imports only as a default (`import fs from 'node:fs'`: is-wsl,
      // is-docker, chalk) is the module itself: otherwise the bundle's ESM interop copies all of its
      // properties (the process object's hundreds) at each such import, on every start.
      name: 'builtin-default',
      setup(b) {
        b.onResolve({ filter: /^node:(process|fs|os|path|tty)$/ }, async (args) => {
          if (args.kind !== 'import-statement' || !/[\\/]node_modules[\\/]/.test(args.importer)) return;
          const text = await readFile(args.importer, 'utf8');
          const specifier = args.path.replace('/', '\\/');
          const imports = text.match(new RegExp(`^import .* from ['"]${specifier}['"];?$`, 'gm')) ?? [];
          if (!imports.every((line) => /^import \w+ from/.test(line))) return;
          return { path: args.path, namespace: 'builtin-default' };
        });
        b.onLoad({ filter: /.*/, namespace: 'builtin-default' }, (args) => ({
          contents:
            args.path === 'node:process'
              ? 'export default process;'
              : `export default require('${args.path}');`,
        }));
      },
    },
    {
      name: 'string-width',
      setup(b) {
        b.onLoad({ filter: /[\\/]node_modules[\\/]string-width[\\/]index\.js$/ }, async (args) => ({
          contents: patched(args.path, await readFile(args.path, 'utf8')),
          loader: 'js',
        }));
      },
    },
    {
      name: 'autocomplete-summaries',
      setup(b) {
        b.onLoad(
          { filter: /[\\/]plugin-autocomplete[\\/]lib[\\/]autocomplete[\\/](zsh|powershell)\.js$/ },
          async (args) => ({
            contents: patched(args.path, await readFile(args.path, 'utf8')),
            loader: 'js',
          }),
        );
      },
    },
    sandboxApart,
    {
      // The plugins pin their own oclif; all of them use ours, so there is one oclif in a run.
      name: 'one-oclif',
      setup(b) {
        b.onResolve({ filter: /^@oclif\/core(\/|$)/ }, (args) =>
          args.pluginData
            ? undefined
            : b.resolve(args.path, { kind: args.kind, resolveDir: process.cwd(), pluginData: true }),
        );
      },
    },
  ],
});
await script('sandbox', {
  entryPoints: ['build/sandbox/start-sandbox.js'],
  // ajv only for MKT_SANDBOX_CHECK_ANSWERS (src/sandbox/openapi/check-answers.ts), from node_modules.
  external: ['@inquirer/prompts', '@napi-rs/keyring', 'open', 'undici', 'ajv', 'ajv-formats'],
  plugins: [honoJsx],
});

// What oclif loads by path: a module each that takes its export from the bundle. CommonJS, like
// bin/run.js: oclif requires them, and no run starts Node's ES module loader.
writeFileSync('dist/package.json', '{ "type": "commonjs" }\n');
for (const key of Object.keys(modules)) {
  const boot = relative(dirname(join('dist', key)), 'dist/boot.js').replaceAll('\\', '/');
  const value = `require('${boot.startsWith('.') ? boot : `./${boot}`}').loadModule('${key}')`;
  mkdirSync(dirname(join('dist', key)), { recursive: true });
  writeFileSync(
    join('dist', `${key}.js`),
    `module.exports = ${key === 'oclif' ? value : `{ default: ${value} }`};\n`,
  );
}
await build({
  entryPoints: ['build/boot.js'],
  outfile: 'dist/boot.js',
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node22',
  define: { MKT_BUNDLE_HASHES: JSON.stringify(hashes) },
  logLevel: 'warning',
});
// The benches start a sandbox in their own process: an ES module (dist/sandbox/package.json) that
// takes it from the same bundle and cache as `mkt sandbox start`.
mkdirSync('dist/sandbox');
writeFileSync('dist/sandbox/package.json', '{ "type": "module" }\n');
writeFileSync(
  'dist/sandbox/index.js',
  [
    "import { createRequire } from 'node:module';",
    "const sandbox = createRequire(import.meta.url)('../boot.js').loadSandbox();",
    'export const { startSandbox, FolderInUseError } = sandbox;',
    '',
  ].join('\n'),
);
console.log(`Bundles: ${sizes.join(', ')}`);
