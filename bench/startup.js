#!/usr/bin/env node
// Start-up cost of mkt: every help screen and every command, as ratios to a bare `node -e ''`
// measured in the same interleaved run (these machines are noisy: an absolute time alone means
// little), then the peak memory of a short command. Targets (issue #51): a command that makes one
// API request ≤ 1.3× a bare Node making the same request (node:http, the same sandbox: the floor
// that keeps their promise), and so ≤ 2.0× `node -e ''`; `--jq` ≤ 1.15× its own floor (that
// request, then jq-wasm as mkt runs it); every other case ≤ 1.5× `node -e ''`; no case slower
// than a baseline build (--compare); peak RSS of a short command ≤ 1.5× a bare Node process.
// Beside them, the floor that keeps a command's whole promise (its parse, help and errors as well as
// its work): a bare oclif CLI making the same GET, or printing a line (bench/bare-oclif.js).
// Prints tables to publish as they are (BENCHMARKS.md), with the load average.
// Usage: npm run build && node bench/startup.js [--rounds 15] [--node PATH] [--compare REV|DIR]...
//   --node PATH    the Node that runs every case (default: this one), e.g.
//                  test/package/node-versions/node_modules/node24/bin/node
//   --compare REV  also runs every case that build has, from the build of git revision REV (e.g.
//                  bf877b7), made reproducibly: a git worktree of REV in the temporary folder,
//                  `npm ci` and `npm run build` there (once; kept for the next run, named by REV)
//   --compare DIR  the same from another copy of mkt: an installed package or a built checkout
//                  (DIR holds its bin/run.js)
//   --snapshot     also a V8 start-up snapshot of the loaded CLI (node --build-snapshot: the bundle,
//                  oclif and whoami evaluated), started and left at once, beside the same modules
//                  loaded at start from the code cache as mkt loads them (its "unbuilt" twin)
//   --keychain     also commands that read their key from the OS keychain, as a desktop user's do
//                  (run under scripts/with-keyring.sh: a Secret Service in a private D-Bus session)
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSandbox } from '../dist/sandbox/index.js';
import { bareOclif } from './bare-oclif.js';

const option = (name) =>
  process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined;
const rounds = Number(option('--rounds')) || 15;
const keychain = process.argv.includes('--keychain');
if (keychain && process.platform === 'linux' && !process.env.DBUS_SESSION_BUS_ADDRESS) {
  console.error('--keychain needs a Secret Service: run it under scripts/with-keyring.sh.');
  process.exit(2);
}
const node = option('--node') ?? process.execPath;
const nodeVersion = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
const others = process.argv.flatMap((a, i) => (a === '--compare' ? [baseline(process.argv[i + 1])] : []));
const bin = fileURLToPath(new URL('../bin/run.js', import.meta.url));
const manifest = JSON.parse(readFileSync(new URL('../oclif.manifest.json', import.meta.url), 'utf8'));
const work = mkdtempSync(join(tmpdir(), 'mkt-bench-'));
const sandbox = await startSandbox({ dataDir: join(work, 'sandbox'), port: 0 });
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MKT_')));
delete env.NODE_EXTRA_CA_CERTS; // adds a fixed cost to every Node start; removed for every case alike
Object.assign(env, { HOME: work, MKT_SITE_URL: sandbox.siteUrl, MKT_CREDENTIAL_STORE: 'file' });
// The live key: a test key may make 100 requests a minute (RATE_LIMITS), fewer than the rounds of
// two or three builds make; past it the sandbox answers 429 and a case waits or fails.
const key = sandbox.seed.live_key;
const user = sandbox.seed.users[0].id;
const app = sandbox.seed.app.id;
/**
 * Each copy of mkt runs in a config folder of its own, signed in and with the app set by itself:
 * each finds what it wrote (formats change between builds), as a user of that build would.
 */
const envs = new Map();
async function signedIn(runJs, label) {
  // A cache folder of its own too: the builds' `autocomplete` runs would otherwise rewrite each
  // other's completion files, which a build keeps only while they are as it left them.
  const own = {
    ...env,
    MKT_CONFIG_DIR: join(work, `config-${label}`),
    MKT_CACHE_DIR: join(work, `cache-${label}`),
  };
  envs.set(runJs, own);
  if ((await run([runJs, 'login', '--with-api-key'], key)) !== 0) throw new Error(`${label}: login failed`);
  if ((await run([runJs, 'config', 'set', 'app', app])) !== 0) throw new Error(`${label}: config set failed`);
  // The keychain's entries are the user's, not the folder's: a profile of each build's own.
  if (keychain && (await run([runJs, 'login', '--with-api-key', '--profile', `kc-${label}`], key, KEYCHAIN)))
    throw new Error(`${label}: login to the keychain failed`);
}
/** A case's environment: the store chosen as a user's is (the keychain when it answers). */
const KEYCHAIN = { MKT_CREDENTIAL_STORE: undefined };
await signedIn(bin, 'this');
for (const { dir, label } of others) await signedIn(join(dir, 'bin', 'run.js'), label);

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
  'help',
  'help apps list',
  'autocomplete bash',
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
if (keychain)
  for (const line of ['whoami --json', `entitlements --json --user ${user}`])
    cases[`mkt ${line.replace(user, 'USER')} (keychain)`] = [
      [bin, ...line.split(' '), '--profile', 'kc-this'],
      '',
      KEYCHAIN,
    ];
// The floor of a command that asks the API: a bare Node that makes one request the same way
// (node:http, the same sandbox) and prints the answer. Node's HTTP client alone costs ~0.4× a bare
// start on its first request, which no command that asks the API can avoid.
const REQUEST = 'node: one GET (node:http)';
/** That GET, as a script's source, `then` given the answer. */
const get = (then) =>
  `require('node:http').get(process.env.MKT_SITE_URL + '/api/v1/whoami', { headers: { 'x-api-key': process.env.BENCH_KEY } }, ${then});`;
/** A case of a bare Node running `source`, signed in as the copies of mkt are. */
function floorCase(name, source) {
  const file = join(work, `floor-${Object.keys(cases).length}.cjs`);
  writeFileSync(file, source);
  envs.set(file, { ...env, BENCH_KEY: key });
  cases[name] = [[file]];
}
floorCase(REQUEST, get('(res) => res.pipe(process.stdout)'));
// The floor of `--jq`: the same GET with jq-wasm loaded and run as mkt runs it (Liftoff only; the
// expression checked on null before the request, then applied to the answer).
const JQ = 'node: one GET, then jq (jq-wasm)';
floorCase(
  JQ,
  `require('node:v8').setFlagsFromString('--liftoff-only');
require(${JSON.stringify(createRequire(import.meta.url).resolve('jq-wasm'))}).loadJq().then((jq) => {
  jq.raw('null', '.email', ['-c']);
  ${get(`(res) => {
    let body = '';
    res.setEncoding('utf8').on('data', (d) => (body += d)).on('end', () => process.stdout.write(jq.raw(body, '.email', ['-c']).stdout));
  }`)}
});`,
);
// The floors that keep a command's whole promise: a bare oclif CLI (bench/bare-oclif.js) with one
// command that makes the same GET and one that prints a line.
const OCLIF_GET = 'oclif: one GET (a bare oclif CLI)';
const OCLIF_PRINT = 'oclif: a command that prints (a bare oclif CLI)';
{
  const bare = bareOclif(join(work, 'bare-oclif'), node, get);
  envs.set(bare, { ...env, BENCH_KEY: key });
  cases[OCLIF_GET] = [[bare, 'whoami', '--json']];
  cases[OCLIF_PRINT] = [[bare, 'hello']];
}
// A V8 start-up snapshot of the loaded CLI (issue 51), built with the Node that runs the cases, and
// its unbuilt twin: the same modules loaded through dist/boot.js (code cache) at start.
const SNAPSHOT = ['snapshot: CLI loaded, from a blob (built)', 'snapshot: CLI loaded at start (unbuilt)'];
if (process.argv.includes('--snapshot')) {
  const boot = fileURLToPath(new URL('../dist/boot.js', import.meta.url));
  const entry = join(work, 'snapshot-entry.cjs');
  writeFileSync(
    entry,
    `const path = require('node:path');
const file = ${JSON.stringify(fileURLToPath(new URL('../dist/mkt.cjs', import.meta.url)))};
const script = new (require('node:vm').Script)(require('node:fs').readFileSync(file, 'latin1'), { filename: file });
const mod = { exports: {} };
script.runInThisContext()(mod.exports, require, mod, file, path.dirname(file), (s) => import(s), () => {});
globalThis.mkt = [mod.exports.load('oclif'), mod.exports.load('commands/whoami')];
require('node:v8').startupSnapshot.setDeserializeMainFunction(() => {});`,
  );
  const blob = join(work, 'mkt.blob');
  execFileSync(node, ['--snapshot-blob', blob, '--build-snapshot', entry], { cwd: work, stdio: 'ignore' });
  cases[SNAPSHOT[0]] = [['--snapshot-blob', blob]];
  floorCase(
    SNAPSHOT[1],
    `const b = require(${JSON.stringify(boot)}); b.loadModule('oclif'); b.loadModule('commands/whoami');`,
  );
}
/** The cases that make a request (login two), compared with that floor too. */
const asking = new Set(
  Object.keys(cases).filter(
    (name) =>
      !name.includes('--help') &&
      /^mkt (whoami --json|entitlements|apps (list|get)|plans list|keys list|auth status|api |login)/.test(
        name,
      ),
  ),
);
// Each case again from each baseline whose manifest has its command (or, for a topic's help, one of
// the topic's commands).
const mine = Object.keys(cases).filter((name) => name.startsWith('mkt '));
for (const { dir, label } of others) {
  const theirs = Object.keys(JSON.parse(readFileSync(join(dir, 'oclif.manifest.json'), 'utf8')).commands);
  for (const name of mine) {
    const [[, ...argv], input, extra] = cases[name];
    const words = argv.filter((a) => !a.startsWith('-'));
    const has =
      words.length === 0 ||
      theirs.some((id) => id.split(':').every((part, i) => words[i] === part)) ||
      (words.length === 1 && theirs.some((id) => id.startsWith(`${words[0]}:`)));
    const own = argv.map((a) => (a === 'kc-this' ? `kc-${label}` : a));
    if (has) cases[`${label}: ${name}`] = [[join(dir, 'bin', 'run.js'), ...own], input, extra];
  }
}

const names = Object.keys(cases);
const times = Object.fromEntries(names.map((k) => [k, []]));
const codes = {};
for (let round = 0; round < rounds + 1; round++) {
  // Rotate the order each round so no case always runs first (or after the same neighbour).
  const order = names.map((_, i) => names[(i + round) % names.length]);
  for (const name of order) {
    const [args, input, extra] = cases[name];
    const started = process.hrtime.bigint();
    const code = await run(args, input, extra);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (round === 0)
      codes[name] = code; // round 0 warms the file cache
    else if (code !== codes[name]) throw new Error(`${name} exited ${code}, ${codes[name]} before`);
    else times[name].push(ms);
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const floor = median(times["node -e ''"]);
const requestFloor = median(times[REQUEST]);
const jqFloor = median(times[JQ]);
const JQ_CASE = 'mkt whoami --jq .email';
/** A case's target: [its floor's name, the floor in ms, the most it may be over it]. */
const target = (name) =>
  asking.has(name)
    ? ['one GET', requestFloor, 1.3]
    : name === JQ_CASE
      ? ['GET + jq', jqFloor, 1.15]
      : ["node -e ''", floor, 1.5];
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(
  `mkt start-up, ${rounds} interleaved rounds after a warm-up, median wall time (Node ${nodeVersion}, ${process.platform} ${process.arch}; load average ${load} at the start)`,
);
console.log(
  `\nTargets: a command that makes one request ≤ 1.3× ${REQUEST}; \`${JQ_CASE}\` ≤ 1.15× ${JQ}; every other case ≤ 1.5× node -e ''${others.length ? '; ≤ 1.00× each baseline' : ''}.`,
);
const head = [
  "| case | median ms | × node -e '' | × its floor (target) |",
  ...others.map(({ label }) => ` ${label} ms | × ${label} |`),
];
console.log(`\n${head.join('')} |`);
console.log(`|---|---:|---:|---:|${others.map(() => '---:|---:|').join('')}---|`);
let missed = 0;
const ratios = [];
const summary = { api: [], other: [] };
for (const name of mine) {
  const m = median(times[name]);
  const ratio = m / floor;
  ratios.push(ratio);
  const [floorName, floorMs, limit] = target(name);
  const overFloor = m / floorMs;
  (floorName === 'one GET' ? summary.api : summary.other).push(overFloor);
  const over = others.map(({ label }) => {
    const theirs = times[`${label}: ${name}`];
    return theirs ? m / median(theirs) : undefined;
  });
  const ok = overFloor <= limit && over.every((r) => r === undefined || r <= 1);
  if (!ok) missed++;
  const code = codes[name] ? ` (exit ${codes[name]})` : '';
  const cells = over.map((r, i) => {
    const theirs = times[`${others[i].label}: ${name}`];
    return theirs ? ` ${median(theirs).toFixed(1)} | ${r.toFixed(2)}× |` : ' – | – |';
  });
  const againstFloor =
    floorName === "node -e ''" ? `(≤ ${limit}×)` : `${overFloor.toFixed(2)}× ${floorName} (≤ ${limit}×)`;
  console.log(
    `| ${name}${code} | ${m.toFixed(1)} | ${ratio.toFixed(2)}× | ${againstFloor} |${cells.join('')} ${ok ? 'met' : 'MISSED'} |`,
  );
}
console.log(`| node -e '' | ${floor.toFixed(1)} | 1.00× | |${others.map(() => ' | |').join('')} floor |`);
console.log(
  `\nThe commands that make a request, against ${REQUEST}: ${requestFloor.toFixed(1)} ms (${(requestFloor / floor).toFixed(2)}× node -e ''), the same interleaved rounds (target ≤ 1.3×):\n`,
);
console.log(
  `| case | median ms | × one GET |${others.map(({ label }) => ` ${label}: × one GET |`).join('')}\n|---|---:|---:|${others.map(() => '---:|').join('')}`,
);
for (const name of asking) {
  const m = median(times[name]);
  const theirs = others.map(({ label }) => times[`${label}: ${name}`]);
  console.log(
    `| ${name} | ${m.toFixed(1)} | ${(m / requestFloor).toFixed(2)}× |${theirs.map((t) => (t ? ` ${(median(t) / requestFloor).toFixed(2)}× |` : ' – |')).join('')}`,
  );
}
console.log(
  `\n\`${JQ_CASE}\` against ${JQ}: ${(median(times[JQ_CASE]) / jqFloor).toFixed(2)}× (target ≤ 1.15×; the floor ${jqFloor.toFixed(1)} ms, ${(jqFloor / floor).toFixed(2)}× node -e '')`,
);
if (times[SNAPSHOT[0]]?.length)
  console.log(
    `\nV8 start-up snapshot of the loaded CLI (bundle, oclif, whoami evaluated; nothing run): ${SNAPSHOT.map((k) => `${k} ${median(times[k]).toFixed(1)} ms (${(median(times[k]) / floor).toFixed(2)}× node -e '')`).join('; ')}`,
  );
// Against the bare oclif CLI (the floor that keeps the whole promise: oclif's parse, help and errors).
const oclifGet = median(times[OCLIF_GET]);
const oclifPrint = median(times[OCLIF_PRINT]);
console.log(
  `\nAgainst a bare oclif CLI that keeps the same promise (oclif's parser, help and errors, then the same work): ${OCLIF_GET} ${oclifGet.toFixed(1)} ms (${(oclifGet / requestFloor).toFixed(2)}× one GET); ${OCLIF_PRINT} ${oclifPrint.toFixed(1)} ms (${(oclifPrint / floor).toFixed(2)}× node -e '').\n`,
);
console.log('| case | × the bare oclif CLI (its GET, or its command that prints) |\n|---|---:|');
for (const name of mine.filter(
  (n) => !n.includes('--help') && n !== JQ_CASE && !/^mkt (--version|autocomplete|help)/.test(n),
))
  console.log(
    `| ${name} | ${(median(times[name]) / (asking.has(name) ? oclifGet : oclifPrint)).toFixed(2)}× |`,
  );
const span = (xs) =>
  xs.length
    ? `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}× (median ${median(xs).toFixed(2)}×)`
    : '–';
console.log(
  `\nAPI commands × one GET: ${span(summary.api)}; every other case × its floor: ${span(summary.other)}; worst: ${Math.max(...ratios).toFixed(2)}× node -e ''; ${missed} of ${mine.length} case(s) missed; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} at the end`,
);

// Peak resident memory (GNU time's maximum RSS), median of 5, for a bare Node and short commands.
if (spawnSync('/usr/bin/time', ['-f', '%M', node, '-e', '']).status === 0) {
  const rss = async (args) => {
    const kbs = [];
    for (let i = 0; i < 5; i++) kbs.push(await run(args, '', {}, true));
    return median(kbs);
  };
  const bare = await rss(['-e', '']);
  console.log(`peak RSS: node -e '' ${(bare / 1024).toFixed(1)} MB`);
  for (const line of ['whoami --json', 'config get app', '--help']) {
    const kb = await rss([bin, ...line.split(' ')]);
    console.log(
      `peak RSS: mkt ${line} ${(kb / 1024).toFixed(1)} MB = ${(kb / bare).toFixed(2)}× (target ≤ 1.5×)`,
    );
  }
}
await sandbox.close();
rmSync(work, { recursive: true, force: true });

/**
 * Runs one case and resolves with its exit code (or, `rss` set, its peak RSS in KiB under GNU
 * time); asynchronous, because the sandbox answering it lives in this process.
 */
function run(args, input, extra = {}, rss = false) {
  return new Promise((resolve) => {
    const [file, argv] = rss ? ['/usr/bin/time', ['-f', '%M', node, ...args]] : [node, args];
    // A copy's own config folder (signedIn); a bare Node gets that of this copy. `extra` changes it
    // (a variable set to undefined is removed).
    const own = { ...(envs.get(args[0]) ?? envs.get(bin)), ...extra };
    for (const [k, v] of Object.entries(own)) if (v === undefined) delete own[k];
    const child = spawn(file, argv, { env: own, stdio: ['pipe', 'ignore', rss ? 'pipe' : 'ignore'] });
    let err = '';
    child.stderr?.setEncoding('utf8').on('data', (d) => (err += d));
    child.on('close', (code) => resolve(rss ? Number(err.trim().split('\n').pop()) : code));
    child.stdin.end(input ?? '');
  });
}

/**
 * A copy of mkt to compare with: DIR as it is, or the build of git revision REV, made once in the
 * temporary folder (a detached git worktree, its own `npm ci`, `npm run build`) and kept there.
 */
function baseline(spec) {
  if (existsSync(join(spec, 'bin', 'run.js'))) return { dir: spec, label: basename(spec) };
  const root = fileURLToPath(new URL('..', import.meta.url));
  const sha = execFileSync('git', ['-C', root, 'rev-parse', '--short', `${spec}^{commit}`], {
    encoding: 'utf8',
  }).trim();
  const dir = join(tmpdir(), `mkt-baseline-${sha}`);
  if (!existsSync(join(dir, 'dist'))) {
    console.error(`Building ${sha} in ${dir} (git worktree, npm ci, npm run build)…`);
    rmSync(dir, { recursive: true, force: true });
    execFileSync('git', ['-C', root, 'worktree', 'prune']);
    execFileSync('git', ['-C', root, 'worktree', 'add', '--detach', dir, sha], { stdio: 'inherit' });
    // The project's Node first, as npm run does (the machine's may be older).
    const env = { ...process.env, PATH: `${join(root, 'node_modules/.bin')}:${process.env.PATH}` };
    execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, env, stdio: 'inherit' });
    execFileSync('npm', ['run', 'build'], { cwd: dir, env, stdio: 'inherit' });
  }
  return { dir, label: sha };
}
