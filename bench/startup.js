#!/usr/bin/env node
// Start-up cost of mkt: every help screen and every command, as ratios to a bare `node -e ''`
// measured in the same interleaved run (these machines are noisy: an absolute time alone means
// little), then the peak memory of a short command. Targets (issue #14): --version ≤ 1.5×, every
// other case ≤ 3×; peak RSS of a short command ≤ 1.6× a bare Node process.
// Usage: npm run build && npm run bench:startup [-- --rounds 15] [-- --compare DIR]...
//   --compare DIR  also runs a few cases from another copy of mkt in the same run: an installed
//                  package (PREFIX/lib/node_modules/mkt after `npm install -g --prefix PREFIX
//                  mkt-*.tgz`) or another checkout's build; DIR holds its bin/run.js
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSandbox } from '../dist/sandbox/index.js';

const option = (name) =>
  process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined;
const rounds = Number(option('--rounds')) || 15;
const others = process.argv.flatMap((a, i) => (a === '--compare' ? [process.argv[i + 1]] : []));
const bin = fileURLToPath(new URL('../bin/run.js', import.meta.url));
const manifest = JSON.parse(readFileSync(new URL('../oclif.manifest.json', import.meta.url), 'utf8'));
const work = mkdtempSync(join(tmpdir(), 'mkt-bench-'));
const sandbox = await startSandbox({ dataDir: join(work, 'sandbox'), port: 0 });
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MKT_')));
delete env.NODE_EXTRA_CA_CERTS; // adds a fixed cost to every Node start; removed for every case alike
Object.assign(env, {
  HOME: work,
  MKT_CONFIG_DIR: join(work, 'config'),
  MKT_SITE_URL: sandbox.siteUrl,
  MKT_CREDENTIAL_STORE: 'file',
});
const key = sandbox.seed.test_key;
if ((await run([bin, 'login', '--with-api-key'], key)) !== 0) throw new Error('login --with-api-key failed');
const user = sandbox.seed.users[0].id;
const app = sandbox.seed.app.id;
if ((await run([bin, 'config', 'set', 'app', app])) !== 0) throw new Error('config set app failed');

const mkt = (line, input) => [[bin, ...line.split(' ')], input];
const cases = { "node -e ''": [['-e', '']], 'mkt --version': mkt('--version'), 'mkt --help': mkt('--help') };
const ids = Object.keys(manifest.commands).filter((id) => !manifest.commands[id].hidden);
for (const topic of new Set(ids.filter((id) => id.includes(':')).map((id) => id.split(':')[0])))
  cases[`mkt ${topic} --help`] = mkt(`${topic} --help`);
for (const id of ids.sort())
  cases[`mkt ${id.replaceAll(':', ' ')} --help`] = mkt(`${id.replaceAll(':', ' ')} --help`);
// Commands doing their work against the sandbox (the long-running ones — sandbox start, webhooks
// listen, login in a browser — start as their --help does, then serve).
for (const line of [
  'whoami --json',
  'whoami --jq .email', // the one case that loads jq (WebAssembly): its cost, apart
  `entitlements --json --user ${user}`,
  'apps list --json',
  `apps get --app ${app} --json`,
  'plans list --json',
  'keys list --json',
  'auth status --json',
  'webhooks deliveries --json',
  'config get app',
  'config list --json',
  'config set app ' + app,
  'trigger',
  'api GET /whoami',
  'logout --profile nobody',
])
  cases[`mkt ${line.replace(user, 'USER').replace(app, 'APP')}`] = mkt(line);
cases['mkt login --with-api-key'] = mkt('login --with-api-key --profile other', key);
for (const dir of others)
  for (const line of ['--version', '--help', 'whoami --help', 'whoami --json', 'config get app'])
    cases[`${basename(dir)}: mkt ${line}`] = [[join(dir, 'bin', 'run.js'), ...line.split(' ')]];

const names = Object.keys(cases);
const times = Object.fromEntries(names.map((k) => [k, []]));
const codes = {};
for (let round = 0; round < rounds + 1; round++) {
  // Rotate the order each round so no case always runs first (or after the same neighbour).
  const order = names.map((_, i) => names[(i + round) % names.length]);
  for (const name of order) {
    const [args, input] = cases[name];
    const started = process.hrtime.bigint();
    const code = await run(args, input);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (round === 0)
      codes[name] = code; // round 0 warms the file cache
    else if (code !== codes[name]) throw new Error(`${name} exited ${code}, ${codes[name]} before`);
    else times[name].push(ms);
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const floor = median(times["node -e ''"]);
const target = (name) => (name === "node -e ''" ? undefined : name.endsWith('--version') ? 1.5 : 3);
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(
  `mkt start-up, ${rounds} interleaved rounds, median wall time (node ${process.version}, ${process.platform} ${process.arch}; load average ${load})`,
);
console.log(`${'case'.padEnd(52)} median ms   × floor   target`);
let missed = 0;
for (const name of names) {
  const m = median(times[name]);
  const ratio = m / floor;
  const t = target(name);
  if (t && ratio > t) missed++;
  const verdict = t ? `≤ ${t}× ${ratio <= t ? 'met' : 'MISSED'}` : 'floor';
  const code = codes[name] ? ` (exit ${codes[name]})` : '';
  console.log(
    `${(name + code).padEnd(52)} ${m.toFixed(1).padStart(9)}   ${ratio.toFixed(2).padStart(6)}×   ${verdict}`,
  );
}
const worst = names.filter((n) => !n.endsWith("''") && !n.endsWith('--version'));
console.log(
  `worst: ${(Math.max(...worst.map((n) => median(times[n]))) / floor).toFixed(2)}×; ${missed} case(s) missed`,
);

// Peak resident memory (GNU time's maximum RSS), median of 5, for a bare Node and short commands.
if (spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, '-e', '']).status === 0) {
  const rss = async (args) => {
    const kbs = [];
    for (let i = 0; i < 5; i++) kbs.push(await run(args, '', true));
    return median(kbs);
  };
  const bare = await rss(['-e', '']);
  console.log(`peak RSS: node -e '' ${(bare / 1024).toFixed(1)} MB`);
  for (const line of ['whoami --json', 'config get app', '--help']) {
    const kb = await rss([bin, ...line.split(' ')]);
    console.log(
      `peak RSS: mkt ${line} ${(kb / 1024).toFixed(1)} MB = ${(kb / bare).toFixed(2)}× (target ≤ 1.6×)`,
    );
  }
}
await sandbox.close();
rmSync(work, { recursive: true, force: true });

/**
 * Runs one case and resolves with its exit code (or, `rss` set, its peak RSS in KiB under GNU
 * time); asynchronous, because the sandbox answering it lives in this process.
 */
function run(args, input, rss = false) {
  return new Promise((resolve) => {
    const [file, argv] = rss
      ? ['/usr/bin/time', ['-f', '%M', process.execPath, ...args]]
      : [process.execPath, args];
    const child = spawn(file, argv, { env, stdio: ['pipe', 'ignore', rss ? 'pipe' : 'ignore'] });
    let err = '';
    child.stderr?.setEncoding('utf8').on('data', (d) => (err += d));
    child.on('close', (code) => resolve(rss ? Number(err.trim().split('\n').pop()) : code));
    child.stdin.end(input ?? '');
  });
}
