#!/usr/bin/env node
// `mkt --version` without loading anything; everything else through oclif, bundled in dist/
// (esbuild.config.js, src/boot.ts): commands are found from oclif.manifest.json and only the one
// run is evaluated.
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v' || argv[0] === 'version')) {
  const { readFileSync } = await import('node:fs');
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`mkt/${version} ${process.platform}-${process.arch} node-${process.version}\n`);
} else {
  // Node 22 and later also keep these few ES modules compiled (src/boot.ts caches the bundle).
  (await import('node:module')).enableCompileCache?.();
  const { default: oclif } = await import('../dist/oclif.js');
  await oclif.execute({ dir: import.meta.url });
}
