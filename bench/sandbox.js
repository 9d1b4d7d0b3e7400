// The sandbox on SQLite and Hono against today's (main at d8f60db: the JSON-lines log and the
// hand-built router), in one run with interleaved rounds on the same machine:
//   - requests per second: reads (GET /api/v1/whoami, GET /api/v1/entitlements with live keys in
//     rotation) and writes (PATCH /api/v1/apps/{id}/plans/{plan} with a developer token, each answered
//     only once it is on disk), CONCURRENCY keep-alive clients; twice: with both sandboxes and the
//     clients in this process (every cost of a request adds up on one event loop), then with each
//     sandbox in a process of its own as `mkt sandbox start` runs it (the clients here, on the other
//     core), with the sandbox's CPU time per request read from /proc;
//   - start-up (startSandbox until it listens, then close) on a data folder of 1,000 and of 100,000
//     records (test users with their subscriptions), written in today's log format; the new sandbox
//     imports that folder once, then every start is measured.
// Today's sandbox is bundled into a temporary folder from `git archive d8f60db` (esbuild, which takes
// its src/ as it was whatever the packages installed now: its CLI half no longer type-checks against them).
//
// Run: npm run build && node bench/sandbox.js
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { appendFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { developerToken } from './developer-token.js';
import { httpClient } from './http.js';

const BASE = 'd8f60db';
const CONCURRENCY = 32;
const READS = Number(process.env.READS ?? 3_000);
const WRITES = Number(process.env.WRITES ?? 1_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
// Enough live keys that no key reaches its limit of 1,000 requests a minute during the run.
const KEYS = Math.max(40, Math.ceil((2 * READS * (ROUNDS + 1)) / 900));
const STARTS = 7;
const SIZES = process.env.SIZES ? [] : [1_000, 100_000];

const root = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'mkt-bench-sandbox-'));
// COMPARE=DIR: "today" is that built checkout's sandbox (DIR/dist/sandbox/index.js, e.g. a worktree of
// 0805a53 after `npm run build`) instead of d8f60db bundled here.
const COMPARE = process.env.COMPARE;
const todayDir = join(work, 'today');
if (!COMPARE) {
  execFileSync('sh', [
    '-c',
    `mkdir -p ${todayDir} && git -C ${root} archive ${BASE} | tar -x -C ${todayDir}`,
  ]);
  symlinkSync(join(root, 'node_modules'), join(todayDir, 'node_modules'));
  execFileSync(join(root, 'node_modules/.bin/esbuild'), [
    join(todayDir, 'src/sandbox/index.ts'),
    '--bundle',
    '--platform=node',
    '--format=esm',
    '--packages=external',
    '--log-level=warning',
    `--outfile=${join(todayDir, 'build/sandbox/index.js')}`,
  ]);
}
const BUNDLES = {
  today: COMPARE ? join(resolve(COMPARE), 'dist/sandbox/index.js') : join(todayDir, 'build/sandbox/index.js'),
  sqlite: join(root, 'dist/sandbox/index.js'),
};
if (COMPARE) console.log(`today: ${BUNDLES.today}; sqlite+hono: this checkout`);
const today = await import(BUNDLES.today);
const current = await import(BUNDLES.sqlite);
const CODES = { today: today.startSandbox, sqlite: current.startSandbox };

const { send, must, close } = httpClient(CONCURRENCY);
async function pool(count, job, workers = CONCURRENCY) {
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < count) await job(next++);
    }),
  );
}

/**
 * A sandbox to measure: started in this process, or in a process of its own as a developer runs it
 * (`mkt sandbox start`: the sandbox alone on its event loop, the clients here), whose CPU time is read
 * from /proc.
 */
async function prepare(name, own) {
  const dataDir = mkdtempSync(join(work, `${name}-`));
  let sb;
  if (own) {
    const code = `const { startSandbox } = await import(${JSON.stringify(BUNDLES[name])});
      const sb = await startSandbox({ dataDir: ${JSON.stringify(dataDir)}, port: 0 });
      console.log(JSON.stringify({ port: sb.port, seed: sb.seed }));`;
    const child = spawn(process.execPath, ['--input-type=module', '--no-warnings', '-e', code], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    process.once('exit', () => child.kill('SIGKILL')); // also when the benchmark fails
    const [line] = await once(createInterface({ input: child.stdout }), 'line');
    const info = JSON.parse(line);
    // CPU time of all its threads in nanoseconds (/proc/PID/task/*/schedstat): clock ticks of 10 ms
    // (/proc/PID/stat) were 10 µs a request over 1,000 writes, as much as the differences measured.
    const ticks = () =>
      readdirSync(`/proc/${child.pid}/task`).reduce(
        (sum, task) =>
          sum + Number(readFileSync(`/proc/${child.pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]),
        0,
      );
    sb = { ...info, ticks, close: () => child.kill('SIGKILL') };
  } else sb = await CODES[name]({ dataDir, port: 0 });
  const auth = { authorization: `Bearer ${await developerToken(sb.port, sb.seed)}` };
  const keys = [];
  for (let i = 0; i < KEYS; i++)
    keys.push(
      (await must(send(sb.port, 'POST', `/api/v1/apps/${sb.seed.app.id}/keys`, auth, { mode: 'live' }), 201))
        .key,
    );
  return { name, sb, auth, keys, users: sb.seed.users.map((u) => u.id), k: 0 };
}

async function measure(t, endpoint) {
  const count = endpoint === 'writes' ? WRITES : READS;
  // A developer token's grant may make 1,000 requests a minute: each measurement of writes has a
  // grant of its own (a fresh sign-in), or the second round of 1,000 writes meets 429.
  if (endpoint === 'writes')
    t.auth = { authorization: `Bearer ${await developerToken(t.sb.port, t.sb.seed)}` };
  const ticks = t.sb.ticks?.();
  const started = performance.now();
  await pool(count, async (i) => {
    const user = t.users[i % t.users.length];
    const res =
      endpoint === 'writes'
        ? await send(t.sb.port, 'PATCH', `/api/v1/apps/${t.sb.seed.app.id}/plans/pro-monthly`, t.auth, {
            name: `Pro ${i}`,
          })
        : await send(
            t.sb.port,
            'GET',
            endpoint === 'whoami' ? '/api/v1/whoami' : `/api/v1/entitlements?user_id=${user}`,
            { 'x-api-key': t.keys[t.k++ % KEYS] },
          );
    if (res.status !== 200) throw new Error(`${t.name} ${endpoint}: ${res.status} ${res.text}`);
  });
  const rps = count / ((performance.now() - started) / 1000);
  return { rps, cpuUs: t.sb.ticks ? (t.sb.ticks() - ticks) / 1000 / count : undefined };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Throughput of both sandboxes in interleaved rounds; in this process, or each in its own. */
async function throughput(own) {
  const targets = [await prepare('today', own), await prepare('sqlite', own)];
  const results = {};
  const ENDPOINTS = ['whoami', 'entitlements', 'writes'];
  for (const t of targets) for (const e of ENDPOINTS) await measure(t, e); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of round % 2 ? [...targets].reverse() : targets) {
      for (const e of ENDPOINTS) (results[`${t.name} ${e}`] ??= []).push(await measure(t, e));
    }
  }
  for (const t of targets) await t.sb.close();
  console.log(
    own
      ? `each sandbox in its own process (as \`mkt sandbox start\`), the clients in this one; requests per second and the sandbox's CPU time per request, median of ${ROUNDS} interleaved rounds:`
      : `both sandboxes and the clients in this process; requests per second, median of ${ROUNDS} interleaved rounds:`,
  );
  for (const e of ENDPOINTS) {
    const [a, b] = ['today', 'sqlite'].map((name) => results[`${name} ${e}`]);
    const rps = [a, b].map((xs) => median(xs.map((x) => x.rps)));
    let line = `  ${e.padEnd(13)} today ${rps[0].toFixed(0).padStart(6)}   sqlite+hono ${rps[1].toFixed(0).padStart(6)}   ratio ${(rps[1] / rps[0]).toFixed(2)}`;
    if (own) {
      const cpu = [a, b].map((xs) => median(xs.map((x) => x.cpuUs)));
      line += `   CPU per request: today ${cpu[0].toFixed(0)} µs, sqlite+hono ${cpu[1].toFixed(0)} µs (today / sqlite+hono ${(cpu[0] / cpu[1]).toFixed(2)})`;
    }
    console.log(line);
  }
}

console.log(`${CONCURRENCY} clients; ${READS} reads / ${WRITES} writes per endpoint and round`);
await throughput(false);
await throughput(true);

// Start-up on 1k and 100k records in today's log format.
console.log(`start-up (startSandbox to listening, then close), median of ${STARTS}:`);
for (const size of SIZES) {
  const folder = mkdtempSync(join(work, `records-${size}-`));
  const seeded = await today.startSandbox({ dataDir: folder, port: 0 });
  const appId = seeded.seed.app.id;
  await seeded.close();
  const lines = [];
  const at = new Date().toISOString();
  for (let i = 0; i < size; i++) {
    const id = `usr_bench${i.toString(16).padStart(8, '0')}`;
    lines.push(
      JSON.stringify({
        op: 'user',
        v: { id, email: `${id}@sandbox.test`, name: 'Bench User', app_id: appId, created_at: at },
      }),
    );
    lines.push(
      JSON.stringify({
        op: 'sub',
        v: {
          user_id: id,
          app_id: appId,
          plan: 'free',
          status: 'active',
          expires_at: null,
          cancelled_at: null,
          api_calls: 0,
          created_at: at,
        },
      }),
    );
  }
  appendFileSync(join(folder, 'log-0.jsonl'), lines.join('\n') + '\n');
  const copies = { today: folder, sqlite: mkdtempSync(join(work, `records-${size}-sqlite-`)) };
  cpSync(folder, copies.sqlite, { recursive: true });
  const importStarted = performance.now();
  await (await current.startSandbox({ dataDir: copies.sqlite, port: 0 })).close();
  const importMs = performance.now() - importStarted;
  const ms = { today: [], sqlite: [] };
  for (let i = 0; i < STARTS; i++) {
    for (const name of i % 2 ? ['sqlite', 'today'] : ['today', 'sqlite']) {
      const started = performance.now();
      const sb = await CODES[name]({ dataDir: copies[name], port: 0 });
      ms[name].push(performance.now() - started);
      await sb.close();
    }
  }
  const bytes = readFileSync(join(copies.today, 'log-0.jsonl')).length;
  console.log(
    `  ${String(size).padStart(7)} records (log ${(bytes / 1e6).toFixed(1)} MB): today ${median(ms.today).toFixed(1)} ms   sqlite ${median(ms.sqlite).toFixed(1)} ms   (one-time import ${importMs.toFixed(0)} ms)`,
  );
}
close();
rmSync(work, { recursive: true, force: true });
