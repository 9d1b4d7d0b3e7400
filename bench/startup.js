#!/usr/bin/env node
// Start-up cost of mkt, as ratios to a bare `node -e ''` measured in the same interleaved run
// (these machines are noisy: an absolute time alone means little). Targets (issue #7):
// --version within 1.5x of the floor; whoami --json and entitlements --json within 4x.
// Usage: npm run build && npm run bench:startup [-- --rounds 20]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSandbox } from '../dist/sandbox/index.js';

const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 15;
const bin = fileURLToPath(new URL('../bin/run.js', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'mkt-bench-'));
const sandbox = await startSandbox({ dataDir: join(work, 'sandbox'), port: 0 });
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MKT_')));
delete env.NODE_EXTRA_CA_CERTS; // adds a fixed cost to every Node start; removed for every case alike
Object.assign(env, {
  MKT_CONFIG_DIR: join(work, 'config'),
  MKT_SITE_URL: sandbox.siteUrl,
  MKT_CREDENTIAL_STORE: 'file',
});
const login = spawn(process.execPath, [bin, 'login', '--with-api-key'], {
  env,
  stdio: ['pipe', 'ignore', 'inherit'],
});
login.stdin.end(sandbox.seed.test_key);
if ((await new Promise((resolve) => login.on('close', resolve))) !== 0)
  throw new Error('login --with-api-key failed');
const user = sandbox.seed.users[0].id;

const cases = {
  "node -e ''": [process.execPath, ['-e', '']],
  'mkt --version': [process.execPath, [bin, '--version']],
  'mkt --help': [process.execPath, [bin, '--help']],
  'mkt whoami --json': [process.execPath, [bin, 'whoami', '--json']],
  'mkt entitlements --json': [process.execPath, [bin, 'entitlements', '--json', '--user', user]],
};
const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
const names = Object.keys(cases);
for (let round = 0; round < rounds + 1; round++) {
  // Rotate the order each round so no case always runs first (or after the same neighbour).
  const order = names.map((_, i) => names[(i + round) % names.length]);
  for (const name of order) {
    const [file, args] = cases[name];
    const started = process.hrtime.bigint();
    const result = await run(file, args);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (result !== 0) throw new Error(`${name} exited ${result}`);
    if (round > 0) times[name].push(ms); // round 0 warms the file cache
  }
}
await sandbox.close();
rmSync(work, { recursive: true, force: true });

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const floor = median(times["node -e ''"]);
const targets = { 'mkt --version': 1.5, 'mkt whoami --json': 4, 'mkt entitlements --json': 4 };
console.log(
  `mkt start-up, ${rounds} interleaved rounds, median wall time (node ${process.version}, ${process.platform} ${process.arch})`,
);
console.log('case                         median ms   × floor   target');
for (const name of names) {
  const m = median(times[name]);
  const ratio = m / floor;
  const target = targets[name] ? `≤ ${targets[name]}× ${ratio <= targets[name] ? 'met' : 'MISSED'}` : '';
  console.log(
    `${name.padEnd(28)} ${m.toFixed(1).padStart(9)}   ${ratio.toFixed(2).padStart(6)}×   ${target}`,
  );
}

/** Runs one case; asynchronous, because the sandbox answering it lives in this process. */
function run(file, args) {
  return new Promise((resolve) => spawn(file, args, { env, stdio: 'ignore' }).on('close', resolve));
}
