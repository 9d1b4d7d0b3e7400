#!/usr/bin/env node
// What each of the bundle's text patches of oclif (src/platform/oclif-patches.ts) still saves:
// the bundle is built with all of them, without each one in turn, and without any, and a few
// start-up cases are counted in instructions (valgrind's callgrind, all threads: a shared, noisy
// machine does not distort a count as it does a time), each after an uncounted run that writes
// the code cache. A patch is worth keeping when its row costs clearly more than "all patches".
// Usage: npm run build && node bench/oclif-patches.js   (needs valgrind; about 5 minutes)
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { oclifPatches } from '../build/platform/oclif-patches.js';

const root = resolve(import.meta.dirname, '..');
const files = Object.keys(oclifPatches());
const variants = {
  'all patches (kept)': [],
  'without: command ids sorted without ICU': ['@oclif/core/lib/config/plugin.js'],
  'without: help text rendered without ejs': ['@oclif/core/lib/help/util.js'],
  'without: ASCII width without string-width': ['string-width/index.js'],
  'no patch': files,
};
const cases = ['--version', '--help', 'whoami --help', 'config get app'];
const work = mkdtempSync(join(tmpdir(), 'mkt-patches-'));
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MKT_')));
Object.assign(env, { HOME: work, MKT_CONFIG_DIR: join(work, 'config'), MKT_CACHE_DIR: join(work, 'cache') });

const rows = [];
try {
  for (const [name, skip] of Object.entries(variants)) {
    execFileSync(process.execPath, ['esbuild.config.js'], {
      cwd: root,
      env: { ...process.env, MKT_BUILD_WITHOUT_PATCHES: skip.join(',') },
      stdio: 'ignore',
    });
    const copy = join(work, String(rows.length));
    for (const part of ['dist', 'bin', 'package.json', 'oclif.manifest.json'])
      cpSync(join(root, part), join(copy, part), { recursive: true });
    symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));
    const bin = join(copy, 'bin', 'run.js');
    const counts = cases.map((line) => {
      spawnSync(process.execPath, [bin, ...line.split(' ')], { env, stdio: 'ignore' }); // writes the code cache
      const run = spawnSync(
        'valgrind',
        ['--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, bin, ...line.split(' ')],
        { env, encoding: 'utf8' },
      );
      const m = /Collected : (\d+)/.exec(run.stderr);
      if (!m) throw new Error(`valgrind gave no count for ${line}:\n${run.stderr.slice(-500)}`);
      return Number(m[1]) / 1e6;
    });
    rows.push([name, counts]);
    console.error(`${name}: ${counts.map((c) => c.toFixed(0)).join(' ')}`);
  }
} finally {
  execFileSync(process.execPath, ['esbuild.config.js'], { cwd: root, stdio: 'ignore' }); // the real build back
  rmSync(work, { recursive: true, force: true });
}
const base = rows[0][1];
console.log(
  `| build (M instructions; Δ against all patches) | ${cases.map((c) => `\`mkt ${c}\``).join(' | ')} |`,
);
console.log(`|---|${cases.map(() => '---').join('|')}|`);
for (const [name, counts] of rows) {
  const cells = counts.map((c, i) =>
    name === rows[0][0]
      ? c.toFixed(0)
      : `${c.toFixed(0)} (${c >= base[i] ? '+' : ''}${(((c - base[i]) / base[i]) * 100).toFixed(1)} %)`,
  );
  console.log(`| ${name} | ${cells.join(' | ')} |`);
}
