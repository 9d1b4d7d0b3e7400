// Throughput and added latency of `mkt webhooks listen` (local receiver → verify → journal (fsync)
// → answer → forward) beside two bare node:http servers, in interleaved rounds of the same run:
//   - durable: the same promise as listen, and nothing else: HMAC over the raw body, the body appended
//     to a file and on disk (O_APPEND|O_DSYNC, one write for the bodies that arrive together: group
//     commit, as listen) before the 202, then the exact bytes and headers forwarded (keep-alive);
//     with --durable-writes records, what listen journals instead of the bare body (its receipt with
//     the headers, then the forward's outcome: listen's bytes on disk);
//   - bare: the same without the file (verify, forward, answer once the target has it);
// (both in bench/listen-baseline.js)
// then the RSS of listen after warm-up and as it takes N deliveries in all. The targets:
// listen ≥ 0.95× durable's throughput, p99 ≤ 2× durable's.
//
//   npm run build && node bench/listen.js [--deliveries 100000] [--rounds 5] [--per-round 3000]
//                                         [--concurrency 32] [--forwards N] [--cpu-prof DIR] [--bare-client undici]
//                                         [--compare DIR] [--durable-writes body|records]
//   --cpu-prof DIR   a V8 CPU profile of listen and one of the durable baseline, in DIR
//   --forwards N     listen's --concurrency, its forwards in flight (default: the same as
//                    --concurrency; the baselines forward without a limit; listen's own default is 8)
//   --compare DIR    also the listen of another built copy of mkt (DIR holds its bin/run.js), in the
//                    same rounds: an A/B of a change
//   --durable-writes records   the durable baseline writes listen's JSON lines, not the bare body
//
// Fair by construction: listen, the bare server and the sender each run in a process of their own
// (the target, which only notes arrivals, stays in this one). A delivery counts when the target has
// its body; its latency runs from the moment the sender started the request (the machine's monotonic
// clock, shared by the processes). "added" latency is that minus the same percentile sent straight to
// the target.
import { fork, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const SECRET = 'whsec_bench';
const now = () => Number(process.hrtime.bigint()) / 1e6; // CLOCK_MONOTONIC: one clock for all processes

if (process.argv[2] === '--sender') {
  // The sender: `count` signed deliveries, `concurrency` at a time (a slot frees on the answer).
  let agent;
  process.on('message', async ({ url, count, concurrency, prefix }) => {
    agent ??= new http.Agent({ keepAlive: true, maxSockets: concurrency });
    const starts = [];
    const answers = []; // ms from the start of each request to the end of its answer
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < count) {
          const id = `${prefix}${next++}`;
          const body = JSON.stringify({
            event: 'user.authorized',
            timestamp: new Date().toISOString(),
            data: { user_id: `usr_${id}`, app_id: 'app_bench', scopes: ['identity:read'] },
          });
          const headers = {
            'content-type': 'application/json',
            'user-agent': 'mkt-bench',
            'x-marketplace-signature': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
            'x-marketplace-delivery': id,
            'x-marketplace-event': 'user.authorized',
          };
          const t0 = now();
          starts.push([id, t0]);
          await new Promise((resolve, reject) => {
            const req = http.request(url, { method: 'POST', agent, headers }, (res) => {
              res.resume().on('end', () => {
                answers.push(now() - t0);
                if (res.statusCode < 300) resolve();
                else reject(new Error(`HTTP ${res.statusCode}`));
              });
            });
            req.on('error', reject);
            req.end(body);
          });
        }
      }),
    );
    process.send({ starts, answers });
  });
} else {
  await main();
}

async function main() {
  const { values: args } = parseArgs({
    options: {
      deliveries: { type: 'string', default: process.env.BENCH_DELIVERIES ?? '100000' },
      rounds: { type: 'string', default: '5' },
      'per-round': { type: 'string', default: '3000' },
      concurrency: { type: 'string', default: '32' },
      forwards: { type: 'string' },
      'cpu-prof': { type: 'string' },
      'bare-client': { type: 'string', default: 'node:http' },
      compare: { type: 'string' },
      'durable-writes': { type: 'string', default: 'body' },
    },
  });
  if (!['body', 'records'].includes(args['durable-writes'])) {
    console.error(`--durable-writes takes body or records, not ${args['durable-writes']}.`);
    process.exit(2);
  }
  const TOTAL = Number(args.deliveries);
  const ROUNDS = Number(args.rounds);
  const PER_ROUND = Number(args['per-round']);
  const CONCURRENCY = Number(args.concurrency);
  const WARM_UP = 1_000;
  const started = performance.now();
  const loadBefore = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const self = fileURLToPath(import.meta.url);

  // The developer's webhook handler: notes when each delivery arrived.
  const arrivals = new Map(); // delivery id → arrival time
  let waiting; // { ids left, resolve } of the round in progress
  const target = http.createServer((req, res) => {
    req.resume().on('end', () => {
      const id = req.headers['x-marketplace-delivery'];
      arrivals.set(id, now());
      res.end();
      if (waiting && --waiting.left === 0) waiting.resolve();
    });
  });
  target.keepAliveTimeout = 30_000;
  await new Promise((r) => target.listen(0, '127.0.0.1', r));
  const targetUrl = `http://127.0.0.1:${target.address().port}/hook`;

  const children = [];
  process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));
  // listen's journal and the durable baseline's file side by side, on the same file system.
  const dir = mkdtempSync(join(tmpdir(), 'mkt-bench-'));
  const baseline = fileURLToPath(new URL('listen-baseline.js', import.meta.url));
  const bareChild = fork(baseline, ['bare', targetUrl, args['bare-client']], { stdio: 'inherit' });
  // With --cpu-prof the durable baseline is profiled too, beside listen (same folder).
  const profile = args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', args['cpu-prof']] : [];
  const durableMode = args['durable-writes'] === 'records' ? 'records' : 'durable';
  const durableChild = fork(
    baseline,
    [durableMode, targetUrl, args['bare-client'], join(dir, 'durable.log')],
    {
      execArgv: profile,
      stdio: 'inherit',
    },
  );
  const sender = fork(self, ['--sender'], { stdio: 'inherit' });
  children.push(bareChild, durableChild, sender);
  const bareUrl = await new Promise((r) => bareChild.once('message', (m) => r(m.url)));
  const durableUrl = await new Promise((r) => durableChild.once('message', (m) => r(m.url)));
  /** `mkt webhooks listen` of the copy of mkt whose bin/run.js is `bin`, with a journal of its own. */
  async function startListen(bin, name, execArgv = []) {
    const outFile = join(dir, `${name}.out`);
    const out = openSync(outFile, 'w');
    const listen = ['webhooks', 'listen', '--json', '--no-relay', '--forward-to', targetUrl];
    const child = spawn(
      process.execPath,
      [...execArgv, bin, ...listen, '--concurrency', args.forwards ?? String(CONCURRENCY)],
      {
        env: {
          ...process.env,
          MKT_CONFIG_DIR: join(dir, name),
          MKT_DATA_DIR: join(dir, name, 'data'),
          MKT_CREDENTIAL_STORE: 'file',
          MKT_WEBHOOK_SECRET: SECRET,
          HOME: dir,
        },
        // listen's --json lines go to a file, as a terminal would take them, not to this process: the
        // target lives here, and parsing them would slow it down during listen's rounds only.
        stdio: ['ignore', out, 'inherit'],
      },
    );
    closeSync(out);
    children.push(child);
    const url = await new Promise((resolve, reject) => {
      child.on('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
      const poll = setInterval(() => {
        const ready = readFileSync(outFile, 'utf8')
          .split('\n')
          .find((l) => l.includes('"ready"'));
        if (!ready) return;
        clearInterval(poll);
        resolve(JSON.parse(ready).receiver);
      }, 50);
    });
    return { child, url };
  }
  const { child, url: listenUrl } = await startListen('bin/run.js', 'listen', profile);
  // --compare: another build's listen in the same rounds (an A/B of a change, on the same minute's disk).
  const other = args.compare ? await startListen(join(args.compare, 'bin/run.js'), 'compare') : undefined;

  const cpuMs = (pid) => {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, in clock ticks of 10 ms
  };
  // Read and write system calls so far (sockets and files alike), from /proc/PID/io.
  const syscalls = (pid) => {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    return Number(io.match(/syscr: (\d+)/)[1]) + Number(io.match(/syscw: (\d+)/)[1]);
  };
  // Seconds × 100 that the machine's cores were idle so far (/proc/stat).
  const machineIdle = () => Number(readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/ +/)[4]);
  const receivers = {
    listen: child.pid,
    compare: other?.child.pid,
    durable: durableChild.pid,
    bare: bareChild.pid,
    direct: undefined,
  };
  let roundNo = 0;

  /** `count` deliveries through `name`'s address, CONCURRENCY in flight, until the target has all. */
  async function round(name, url, count) {
    const prefix = `dlv_r${roundNo++}_`;
    const pid = receivers[name];
    const cpu0 = [cpuMs(sender.pid), pid ? cpuMs(pid) : 0];
    const calls0 = pid ? syscalls(pid) : 0;
    const idle0 = machineIdle();
    const arrived = new Promise((resolve) => (waiting = { left: count, resolve }));
    sender.send({ url, count, concurrency: CONCURRENCY, prefix });
    const { starts, answers } = await new Promise((r) => sender.once('message', r));
    answers.sort((a, b) => a - b);
    await arrived;
    waiting = undefined;
    const latencies = starts.map(([id, t0]) => arrivals.get(id) - t0).sort((a, b) => a - b);
    const first = Math.min(...starts.map(([, t0]) => t0));
    const last = Math.max(...starts.map(([id]) => arrivals.get(id)));
    for (const [id] of starts) arrivals.delete(id);
    const seconds = (last - first) / 1000;
    const receiverMs = pid ? cpuMs(pid) - cpu0[1] : 0;
    return {
      cpuSender: (cpuMs(sender.pid) - cpu0[0]) / 10 / seconds,
      machineBusy: 1 - (machineIdle() - idle0) / (cpus().length * 100 * seconds),
      syscallsPerDelivery: pid ? (syscalls(pid) - calls0) / count : 0,
      cpuPerDelivery: (receiverMs * 1000) / count, // µs of the receiver's CPU (user + system) a delivery
      cpuReceiver: pid ? (cpuMs(pid) - cpu0[1]) / 10 / seconds : 0,
      rate: count / seconds,
      answer: answers[Math.floor(answers.length * 0.5)],
      p50: latencies[Math.floor(latencies.length * 0.5)],
      p99: latencies[Math.floor(latencies.length * 0.99)],
    };
  }
  const rss = () =>
    Number(readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]) / 1024;
  const urls = {
    listen: listenUrl,
    compare: other?.url,
    durable: durableUrl,
    bare: bareUrl,
    direct: targetUrl,
  };
  const names = Object.keys(urls).filter((name) => urls[name]);

  let listenCount = 0;
  const viaListen = async (count) => {
    listenCount += count;
    return round('listen', listenUrl, count);
  };
  await viaListen(WARM_UP);
  for (const name of names.slice(1)) await round(name, urls[name], WARM_UP);
  const rssWarm = rss();

  const results = Object.fromEntries(names.map((name) => [name, []]));
  for (let i = 0; i < ROUNDS; i++) {
    results.listen.push(await viaListen(PER_ROUND));
    for (const name of names.slice(1)) results[name].push(await round(name, urls[name], PER_ROUND));
  }
  const median = (name, k) => results[name].map((x) => x[k]).sort((a, b) => a - b)[Math.floor(ROUNDS / 2)];
  const fmt = (name) => {
    const added = (k) =>
      name === 'direct' ? '' : ` (+${(median(name, k) - median('direct', k)).toFixed(2)})`;
    const perDelivery =
      name === 'direct'
        ? ''
        : ` (${median(name, 'cpuPerDelivery').toFixed(0)} µs and ${median(name, 'syscallsPerDelivery').toFixed(2)} reads and writes a delivery)`;
    return `${name.padEnd(7)} ${median(name, 'rate').toFixed(0).padStart(6)} deliveries/s   answered p50 ${median(name, 'answer').toFixed(2)} ms   p50 ${median(name, 'p50').toFixed(2)} ms${added('p50')}   p99 ${median(name, 'p99').toFixed(2)} ms${added('p99')}   CPU machine ${(median(name, 'machineBusy') * 100).toFixed(0)}% sender ${median(name, 'cpuSender').toFixed(0)}% receiver ${median(name, 'cpuReceiver').toFixed(0)}%${perDelivery}`;
  };
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  console.log(
    `Load average before ${loadBefore}, after the rounds ${load()} (${cpus().length} cores); journal in ${dir}`,
  );
  console.log(
    `Deliveries sender → receiver → target, each in its own process (${ROUNDS} interleaved rounds of ${PER_ROUND}, ${CONCURRENCY} in flight, listen's --concurrency ${args.forwards ?? CONCURRENCY}; medians; latency until the target has it, (+added) over direct; bare forwards with ${args['bare-client']}, listen with undici):`,
  );
  for (const name of names) console.log(fmt(name));
  // Each round's ratio to the round of `base` right after it (the disk and the machine change from
  // minute to minute: neighbours share the most), then the median of those.
  const paired = (name, base, k) =>
    results[name].map((x, i) => x[k] / results[base][i][k]).sort((a, b) => a - b)[Math.floor(ROUNDS / 2)];
  const ratio = (name, base) =>
    `throughput ${paired(name, base, 'rate').toFixed(2)}×, p99 ${paired(name, base, 'p99').toFixed(2)}×, CPU a delivery ${paired(name, base, 'cpuPerDelivery').toFixed(2)}×`;
  console.log(
    `ratio   listen/durable ${ratio('listen', 'durable')}  (targets: throughput ≥ 0.95×, p99 ≤ 2×; the same promise on both sides; medians of each round's ratio to the next)`,
  );
  console.log(`ratio   listen/bare    ${ratio('listen', 'bare')}  (bare writes nothing)`);
  // What each wrote to disk a delivery (before the memory run below adds to listen's journal).
  const bytes = (path) =>
    statSync(path).isDirectory()
      ? readdirSync(path).reduce((n, f) => n + bytes(join(path, f)), 0)
      : path.endsWith('.jsonl') || path.endsWith('.log')
        ? statSync(path).size
        : 0;
  const perDelivery = (path) => (bytes(path) / (WARM_UP + ROUNDS * PER_ROUND)).toFixed(0);
  console.log(
    `bytes on disk a delivery: listen ${perDelivery(join(dir, 'listen'))}, durable ${perDelivery(join(dir, 'durable.log'))} (--durable-writes ${args['durable-writes']})`,
  );
  if (other) {
    console.log(`ratio   compare/durable ${ratio('compare', 'durable')}  (--compare ${args.compare})`);
    console.log(`ratio   listen/compare ${ratio('listen', 'compare')}`);
  }

  // Memory: listen takes deliveries until it has had TOTAL in all; RSS at the half and at the end.
  const t1 = performance.now();
  let rssHalf = listenCount >= TOTAL / 2 ? rss() : 0;
  while (listenCount < TOTAL) {
    const half = Math.ceil(TOTAL / 2);
    const upTo = listenCount < half ? half : TOTAL;
    await viaListen(Math.min(10_000, upTo - listenCount));
    if (listenCount === half) rssHalf = rss();
  }
  const rssEnd = rss();
  const memSeconds = (performance.now() - t1) / 1000;
  console.log(
    `RSS of listen: ${rssWarm.toFixed(0)} MB after warm-up, ${rssHalf.toFixed(0)} MB after ${Math.ceil(TOTAL / 2).toLocaleString('en')}, ${rssEnd.toFixed(0)} MB after ${TOTAL.toLocaleString('en')} deliveries (${((listenCount - (WARM_UP + ROUNDS * PER_ROUND)) / memSeconds) | 0}/s in that run)`,
  );

  for (const c of [child, other?.child].filter(Boolean)) {
    c.kill('SIGINT');
    await new Promise((r) => c.on('exit', r));
  }
  bareChild.kill();
  durableChild.kill();
  sender.kill();
  await new Promise((r) => durableChild.on('exit', r)); // its profile written, under --cpu-prof
  target.close();
  rmSync(dir, { recursive: true, force: true });
  console.log(`Total ${((performance.now() - started) / 1000).toFixed(0)} s`);
}
