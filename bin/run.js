#!/usr/bin/env node
// `mkt --version` without loading anything; everything else through oclif, bundled in dist/
// (esbuild.config.js, src/boot.ts): commands are found from oclif.manifest.json and only the one
// run is evaluated. CommonJS (bin/package.json, dist/package.json): a run starts no ES module loader.
// --no-color works anywhere before `--`, on every command, as chalk and users expect: a switch for the
// whole run (FORCE_COLOR=0, which chalk and src/output/colour.ts read), not a flag of each command.
const end = process.argv.indexOf('--');
const noColor = process.argv.findIndex((a, i) => i > 1 && (end < 0 || i < end) && a === '--no-color');
if (noColor > 1) {
  process.argv.splice(noColor, 1);
  process.env.FORCE_COLOR = '0';
}
const argv = process.argv.slice(2);
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 13)) {
  // node:sqlite (the sandbox's store) and the rest of mkt need 22.13; say so before anything fails.
  process.stderr.write(
    `mkt needs Node.js 22.13 or newer; this is Node.js ${process.version}.\n` +
      'Install a current Node.js (22 or 24) from https://nodejs.org and run mkt again.\n',
  );
  process.exitCode = 1;
} else if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v' || argv[0] === 'version')) {
  // How this copy was installed: package.json's mkt.install, set by scripts/pack-standalone.js
  // ("standalone" for an archive, "deb"); an npm install has none.
  const { version, mkt } = require('../package.json');
  const how = mkt && mkt.install ? ` (${mkt.install})` : '';
  process.stdout.write(`mkt/${version} ${process.platform}-${process.arch} node-${process.version}${how}\n`);
} else {
  // src/boot.ts keeps the bundle compiled, and turns Node's compile cache on in the same checked
  // folder (never Node's default, the shared temporary folder).
  let oclif;
  try {
    oclif = require('../dist/oclif.js');
  } catch (err) {
    // A clone that was never built: one sentence and the command that builds it, not a Node stack.
    if (err.code !== 'MODULE_NOT_FOUND' || !/dist[\\/]oclif\.js/.test(String(err.message))) throw err;
    process.stderr.write('Error: mkt is not built yet in this folder.\n  Try: npm run build\n');
    process.exit(1);
  }
  oclif.execute({ dir: require('node:path').join(__dirname, '..') });
}
