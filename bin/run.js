#!/usr/bin/env node
// `mkt --version` without loading anything; everything else through oclif, bundled in dist/
// (esbuild.config.js, src/boot.ts): commands are found from oclif.manifest.json and only the one
// run is evaluated. CommonJS (bin/package.json, dist/package.json): a run starts no ES module loader.
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v' || argv[0] === 'version')) {
  const { version } = require('../package.json');
  process.stdout.write(`mkt/${version} ${process.platform}-${process.arch} node-${process.version}\n`);
} else {
  // src/boot.ts keeps the bundle compiled, and turns Node's compile cache on in the same checked
  // folder (never Node's default, the shared temporary folder).
  const oclif = require('../dist/oclif.js');
  oclif.execute({ dir: require('node:path').join(__dirname, '..') });
}
