#!/usr/bin/env node
// `mkt --version` without loading anything; everything else through oclif, bundled in dist/
// (esbuild.config.js, src/boot.ts): commands are found from oclif.manifest.json and only the one
// run is evaluated. CommonJS (bin/package.json, dist/package.json): a run starts no ES module loader.
// This file parses on any Node (nothing newer than ES2015), so that an old one gets to the check below.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 13)) {
  // node:sqlite (the sandbox's store) and the rest of mkt need 22.13: the project's own Node in a
  // checkout, else one sentence with the fix (bin/old-node.js).
  require('./old-node.js')();
} else {
  run(process.argv);
}

/** mkt on a Node it runs on. */
function run(args) {
  // --no-color works anywhere before `--`, on every command, as chalk and users expect: a switch for
  // the whole run (FORCE_COLOR=0, which chalk and src/output/colour.ts read), not a flag of each command.
  const end = args.indexOf('--');
  const noColor = args.findIndex((a, i) => i > 1 && (end < 0 || i < end) && a === '--no-color');
  if (noColor > 1) {
    args.splice(noColor, 1);
    process.env.FORCE_COLOR = '0';
  }
  // Output that cannot be written is an error (exit 1), as with gh: a full disk, an I/O error, a
  // reader that closed the pipe (said by nothing more: the reader has gone, as after `| head -1`).
  process.stdout.on('error', (err) => {
    if (err.code !== 'EPIPE')
      process.stderr.write(
        `Error: mkt could not write its output: ${err.message.replace(/, write$/, '')}.\n`,
      );
    process.exit(1);
  });
  const argv = args.slice(2);
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v' || argv[0] === 'version')) {
    // How this copy was installed: package.json's mkt.install, set by scripts/pack-standalone.js
    // ("standalone" for an archive, "deb"); an npm install has none.
    const { version, mkt } = require('../package.json');
    const how = mkt && mkt.install ? ` (${mkt.install})` : '';
    process.stdout.write(
      `mkt/${version} ${process.platform}-${process.arch} node-${process.version}${how}\n`,
    );
    return;
  }
  helpShortFlag(args);
  moveLeadingGlobalFlags(args);
  // `mkt help [WORDS…]` prints what `mkt [WORDS…] --help` prints (the same screen, the same error for
  // a word that is no command): taken that way, without loading oclif's help command first.
  if (argv[0] === 'help' && argv.slice(1).every((a) => !a.startsWith('-')))
    args.splice(2, argv.length, ...argv.slice(1), '--help');
  // mkt runs its bundle, never its TypeScript: under NODE_ENV=development or test (common in
  // developers' shells) oclif would otherwise load TypeScript (9 MB, 0.1 s a start) to look for sources.
  globalThis.oclif = Object.assign(globalThis.oclif || {}, { enableAutoTranspile: false });
  // src/boot.ts keeps the bundle compiled, and turns Node's compile cache on in the same checked
  // folder (never Node's default, the shared temporary folder).
  let boot;
  try {
    boot = require('../dist/boot.js');
  } catch (err) {
    // A clone that was never built: one sentence and the command that builds it, not a Node stack.
    if (err.code !== 'MODULE_NOT_FOUND' || !/dist[\\/]boot\.js/.test(String(err.message))) throw err;
    process.stderr.write('Error: mkt is not built yet in this folder.\n  Try: npm run build\n');
    process.exit(1);
  }
  // A help screen this build printed before, for this terminal and environment: printed again
  // without oclif (src/boot.ts, helpFromCache).
  if (boot.helpFromCache(args.slice(2))) return;
  // One command's entry of the manifest, when that is all this run needs (src/boot.ts, commandManifest).
  globalThis.oclif.mktManifest = boot.commandManifest(args.slice(2));
  require('../dist/oclif.js').execute({ dir: require('path').join(__dirname, '..') });
}

/** `-h` is `--help` everywhere before `--`, as with gh and npm (no command has a flag -h of its own). */
function helpShortFlag(args) {
  const end = args.indexOf('--');
  for (let i = 2; i < (end < 0 ? args.length : end); i++) if (args[i] === '-h') args[i] = '--help';
}

/**
 * Global flags may stand before the command, as with gh (`mkt --profile ada whoami`, `mkt --json
 * whoami`, `mkt --jq .email whoami`): oclif reads the first word as the command, so the flags that
 * lead are moved behind the command's words (before any `--`), where every command takes them. A
 * flag's value goes with it. `mkt --help whoami` is `mkt whoami --help`.
 */
function moveLeadingGlobalFlags(args) {
  const withValue = ['--profile', '--site-url', '--jq'];
  const alone = ['--json', '--verbose', '--help'];
  const moved = [];
  let i = 2;
  for (;;) {
    const word = args[i];
    if (alone.includes(word) || withValue.some((f) => word && word.startsWith(`${f}=`))) {
      moved.push(word);
      i += 1;
    } else if (withValue.includes(word) && i + 1 < args.length) {
      moved.push(word, args[i + 1]);
      i += 2;
    } else break;
  }
  // Only when a command follows: `mkt --json` alone stays as typed.
  if (moved.length === 0 || i >= args.length || args[i].startsWith('-')) return;
  args.splice(2, i - 2);
  const end = args.indexOf('--');
  args.splice(end < 0 ? args.length : end, 0, ...moved);
}
