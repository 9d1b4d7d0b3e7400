#!/usr/bin/env node
// Start-up of the standalone install against the npm install of the same build, on this machine,
// in one interleaved run (target: standalone ≤ 1.05× npm). The npm install is `npm install -g` of
// `npm pack` into a temporary prefix, run as a user runs it (its `#!/usr/bin/env node` finds a
// Node 22.23.3 first on PATH: the archive's own binary); the standalone one is release/'s linux-x64 archive unpacked,
// run through its bin/mkt (its own Node). Both answer a sandbox started here.
// Usage: npm run bench:standalone [-- --rounds 20]   (packs first; alone: node bench/standalone.js)
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSandbox } from '../dist/sandbox/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 20;
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const work = mkdtempSync(join(tmpdir(), 'mkt-bench-standalone-'));
const sh = (cmd, args, cwd = work) =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });

const [{ filename }] = JSON.parse(
  sh('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], root),
);
sh('npm', [
  'install',
  '-g',
  '--prefix',
  join(work, 'npm'),
  '--prefer-offline',
  '--no-audit',
  '--no-fund',
  join(work, filename),
]);
mkdirSync(join(work, 'standalone'));
sh('tar', [
  '-xzf',
  join(root, 'release', `mkt-v${version}-linux-x64.tar.gz`),
  '-C',
  join(work, 'standalone'),
]);

const sandbox = await startSandbox({ dataDir: join(work, 'sandbox'), port: 0 });
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MKT_')));
delete env.NODE_EXTRA_CA_CERTS; // a fixed cost on every Node start, removed for both alike
Object.assign(env, {
  HOME: work,
  MKT_CONFIG_DIR: join(work, 'config'),
  MKT_SITE_URL: sandbox.siteUrl,
  MKT_API_KEY: sandbox.seed.test_key,
  MKT_CREDENTIAL_STORE: 'file',
  // The npm install's `env node` finds a Node 22.23.3 first on PATH: the very file the standalone
  // one carries (a fresh copy of the same binary starts measurably slower than one the machine has
  // kept hot, which is the machine, not the install).
  PATH: `${join(work, 'node-bin')}:${env.PATH}`,
});
mkdirSync(join(work, 'node-bin'));
symlinkSync(join(work, 'standalone/mkt/lib/node'), join(work, 'node-bin/node'));
const installs = {
  npm: join(work, 'npm/bin/mkt'),
  standalone: join(work, 'standalone/mkt/bin/mkt'),
};
const lines = ['--version', '--help', 'whoami --help', 'whoami --json', 'config get site-url'];
const times = {};
for (let round = 0; round <= rounds; round++)
  for (const line of round % 2 ? lines : [...lines].reverse())
    for (const [name, bin] of round % 2 ? Object.entries(installs) : Object.entries(installs).reverse()) {
      const started = process.hrtime.bigint();
      const code = await run(bin, line.split(' '));
      if (code !== 0) throw new Error(`${name}: mkt ${line} exited ${code}`);
      if (round > 0) (times[`${name}\0${line}`] ??= []).push(Number(process.hrtime.bigint() - started) / 1e6);
    }

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(`standalone vs npm install, ${rounds} interleaved rounds, median ms (load average ${load})`);
console.log(
  `${'case'.padEnd(24)} ${'npm'.padStart(8)} ${'standalone'.padStart(11)}   ratio   target ≤ 1.05×`,
);
let missed = 0;
for (const line of lines) {
  const [npm, alone] = ['npm', 'standalone'].map((n) => median(times[`${n}\0${line}`]));
  const ratio = alone / npm;
  if (ratio > 1.05) missed++;
  console.log(
    `${`mkt ${line}`.padEnd(24)} ${npm.toFixed(1).padStart(8)} ${alone.toFixed(1).padStart(11)}   ${ratio.toFixed(2)}×   ${ratio <= 1.05 ? 'met' : 'MISSED'}`,
  );
}
console.log(`${missed} case(s) missed`);
await sandbox.close();
rmSync(work, { recursive: true, force: true });

/** Runs one case to its end; resolves with its exit code (the sandbox answering it lives here). */
function run(bin, args) {
  return new Promise((resolve) => {
    const child = spawn(bin, args, { env, stdio: ['ignore', 'ignore', 'ignore'] });
    child.on('close', resolve);
  });
}
