// The CLI as it runs (npm run build: tsc writes build/, this bundles it into dist/, then `oclif
// manifest`). oclif finds commands and hooks by path under dist/ as before; each is a small ES
// module, and what they share (oclif, our domain code) sits in chunks beside them, so a run loads a
// few files instead of oclif's ~160 CommonJS modules and only its own command. The help and
// autocomplete plugins are bundled as the root plugin's commands, on the same oclif.
// Why and how much: BENCHMARKS.md (start-up).
import { build } from 'esbuild';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const oclif = JSON.parse(readFileSync('package.json', 'utf8')).oclif;
// Each plugin's entry is its lib/index.js.
const plugin = (name, file) => join(dirname(require.resolve(name)), '..', file);

const entries = {
  oclif: require.resolve('@oclif/core'),
  // the benches start a sandbox in their own process
  'sandbox/index': 'build/sandbox/index.js',
  'commands/help': plugin('@oclif/plugin-help', 'lib/commands/help.js'),
  'commands/autocomplete/index': plugin('@oclif/plugin-autocomplete', 'lib/commands/autocomplete/index.js'),
  'commands/autocomplete/create': plugin('@oclif/plugin-autocomplete', 'lib/commands/autocomplete/create.js'),
  'commands/autocomplete/script': plugin('@oclif/plugin-autocomplete', 'lib/commands/autocomplete/script.js'),
};
for (const file of readdirSync('build/commands', { recursive: true }))
  if (file.endsWith('.js')) entries[join('commands', file.slice(0, -3))] = join('build/commands', file);
// Hooks and a help class of our own, named in package.json under ./dist/, come from build/.
for (const path of [oclif.helpClass, ...Object.values(oclif.hooks ?? {}).flat()])
  if (typeof path === 'string' && existsSync(path.replace('./dist/', 'build/')))
    entries[path.replace(/^\.\/dist\/|\.js$/g, '')] = path.replace('./dist/', 'build/');

/** A module object that loads the module on first use (in every output file: see lazy-oclif). */
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

rmSync('dist', { recursive: true, force: true });
await build({
  entryPoints: Object.entries(entries).map(([out, file]) => ({ in: file, out })),
  outdir: 'dist',
  // Chunks sit at dist/ itself, one level below package.json, like build/version.js reading it.
  chunkNames: 'chunk-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Loaded on demand from node_modules as before (docs/CONTRIBUTING.md: heavy modules).
  external: [
    ...['@inquirer/prompts', '@napi-rs/keyring', 'open', 'undici', 'typescript'],
    // oclif's dependencies that a run with a manifest never reaches (globbing for commands, plugin
    // patterns, version ranges, config files, spinners): not parsed at each start, loaded if used.
    ...['tinyglobby', 'minimatch', 'semver', 'lilconfig', 'cli-spinners'],
  ],
  banner: {
    js: [
      "import { createRequire as __mktCreateRequire } from 'node:module';",
      'const require = __mktCreateRequire(import.meta.url);',
      __mktLazy.toString(),
    ].join('\n'),
  },
  plugins: [
    {
      // oclif's modules require each other at the top (~160 of them, and Node built-ins such as
      // perf_hooks): each is evaluated when first used instead, which most runs never do.
      name: 'lazy-oclif',
      setup(b) {
        b.onLoad({ filter: /[\\/]@oclif[\\/]core[\\/]lib[\\/].*\.js$/ }, async (args) => ({
          contents: (await readFile(args.path, 'utf8'))
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
            // does not have; npm checks ours (>=20.19) at install.
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
  logLevel: 'warning',
});
