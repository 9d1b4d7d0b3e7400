#!/usr/bin/env node
// Fast paths: `mkt --version` without loading anything, and the commands scripts call in loops
// (whoami, entitlements) without loading oclif; everything else goes through oclif.
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v' || argv[0] === 'version')) {
  const { readFileSync } = await import('node:fs');
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`mkt/${version} ${process.platform}-${process.arch} node-${process.version}\n`);
} else if (
  !(argv[0] === 'whoami' || argv[0] === 'entitlements') ||
  !(await (await import('../dist/fast-path.js')).runFast(argv))
) {
  const { execute } = await import('@oclif/core');
  await execute({ dir: import.meta.url });
}
