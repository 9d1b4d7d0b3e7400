// Throughput and added latency of `mkt webhooks listen` (local receiver → verify → journal (fsync)
// → forward) beside a bare node:http server that does the same work without the journal (HMAC over
// the raw body, forward the exact bytes and headers with a keep-alive agent), in interleaved rounds
// of the same run; then the RSS of listen after warm-up and as it takes N deliveries in all.
//
//   npm run build && node bench/listen.js [--deliveries 100000] [--rounds 3] [--per-round 3000]
//                                         [--concurrency 32] [--cpu-prof DIR]
//
// Both paths are measured end to end: a delivery counts when the target server received it, and its
// latency is from the moment the sender started the request to the moment the target had the body.
// "added" latency is that minus the same percentile of sending straight to the target.
import { spawn } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    deliveries: { type: 'string', default: process.env.BENCH_DELIVERIES ?? '100000' },
    rounds: { type: 'string', default: '3' },
    'per-round': { type: 'string', default: '3000' },
    concurrency: { type: 'string', default: '32' },
    'cpu-prof': { type: 'string' },
  },
});
const SECRET = 'whsec_bench';
const TOTAL = Number(args.deliveries);
const ROUNDS = Number(args.rounds);
const PER_ROUND = Number(args['per-round']);
const CONCURRENCY = Number(args.concurrency);
const WARM_UP = 1_000;
const started = performance.now();

// The developer's webhook handler: notes when each delivery arrived.
const arrivals = new Map(); // delivery id → resolve(arrival time)
const target = http.createServer((req, res) => {
  req.resume().on('end', () => {
    const id = req.headers['x-marketplace-delivery'];
    const done = arrivals.get(id);
    arrivals.delete(id);
    done?.(performance.now());
    res.end();
  });
});
target.keepAliveTimeout = 30_000;
await new Promise((r) => target.listen(0, '127.0.0.1', r));
const targetUrl = `http://127.0.0.1:${target.address().port}/hook`;

// The baseline: verify over the raw bytes in constant time, forward the same bytes and headers.
const bareAgent = new http.Agent({ keepAlive: true });
const bare = http.createServer((req, res) => {
  const chunks = [];
  req
    .on('data', (c) => chunks.push(c))
    .on('end', () => {
      const body = Buffer.concat(chunks);
      const given = Buffer.from(String(req.headers['x-marketplace-signature']).slice(7), 'hex');
      const want = createHmac('sha256', SECRET).update(body).digest();
      if (given.length !== want.length || !timingSafeEqual(given, want)) return res.writeHead(401).end();
      const { host: _host, connection: _connection, ...headers } = req.headers;
      const fwd = http.request(targetUrl, { method: 'POST', agent: bareAgent, headers }, (r) => {
        r.resume().on('end', () => res.writeHead(202).end());
      });
      fwd.on('error', () => res.writeHead(502).end());
      fwd.end(body);
    });
});
bare.keepAliveTimeout = 30_000;
await new Promise((r) => bare.listen(0, '127.0.0.1', r));
const bareUrl = `http://127.0.0.1:${bare.address().port}/`;

const dir = mkdtempSync(join(tmpdir(), 'mkt-bench-'));
const child = spawn(
  process.execPath,
  [
    ...(args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', args['cpu-prof']] : []),
    'bin/run.js',
    'webhooks',
    'listen',
    '--json',
    '--no-relay',
    '--forward-to',
    targetUrl,
    '--concurrency',
    String(CONCURRENCY),
  ],
  {
    env: {
      ...process.env,
      MKT_CONFIG_DIR: dir,
      MKT_DATA_DIR: join(dir, 'data'),
      MKT_CREDENTIAL_STORE: 'file',
      MKT_WEBHOOK_SECRET: SECRET,
      HOME: dir,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
process.on('exit', () => child.kill('SIGKILL'));
const listenUrl = await new Promise((resolve, reject) => {
  let buf = '';
  const onData = (d) => {
    buf += d;
    const ready = buf.split('\n').find((l) => l.includes('"ready"'));
    if (!ready) return;
    child.stdout.off('data', onData);
    child.stdout.resume(); // the --json lines are read and dropped, as a terminal would take them
    resolve(JSON.parse(ready).receiver);
  };
  child.stdout.setEncoding('utf8').on('data', onData);
  child.on('exit', (code) => reject(new Error(`listen exited with ${code}`)));
});

const senderAgent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
let n = 0;
function send(url) {
  const id = `dlv_b${n++}`;
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
  const t0 = performance.now();
  const arrived = new Promise((resolve) => arrivals.set(id, resolve)).then((t) => t - t0);
  const answered = new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: senderAgent, headers }, (res) => {
      res
        .resume()
        .on('end', () => (res.statusCode < 300 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
  return { answered, arrived };
}

const childCpuMs = () => {
  const f = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, in clock ticks of 10 ms
};
const ownCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** `count` deliveries, CONCURRENCY at a time (a slot is free when the sender got its answer). */
async function round(url, count) {
  const latencies = [];
  const arrivalsDone = [];
  const cpu0 = [ownCpuMs(), childCpuMs()];
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < count) {
        const d = send(url);
        arrivalsDone.push(d.arrived.then((ms) => latencies.push(ms)));
        await d.answered;
      }
    }),
  );
  await Promise.all(arrivalsDone);
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    cpuBench: (ownCpuMs() - cpu0[0]) / 10 / seconds,
    cpuListen: (childCpuMs() - cpu0[1]) / 10 / seconds,
    rate: count / seconds,
    p50: latencies[Math.floor(latencies.length * 0.5)],
    p99: latencies[Math.floor(latencies.length * 0.99)],
  };
}
const rss = () => Number(readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]) / 1024;

let listenCount = 0;
const viaListen = async (count) => {
  listenCount += count;
  return round(listenUrl, count);
};
await viaListen(WARM_UP);
await round(bareUrl, WARM_UP);
await round(targetUrl, WARM_UP);
const rssWarm = rss();

const results = { listen: [], bare: [], direct: [] };
for (let i = 0; i < ROUNDS; i++) {
  results.listen.push(await viaListen(PER_ROUND));
  results.bare.push(await round(bareUrl, PER_ROUND));
  results.direct.push(await round(targetUrl, PER_ROUND));
}
const median = (name, k) => results[name].map((x) => x[k]).sort((a, b) => a - b)[Math.floor(ROUNDS / 2)];
const fmt = (name) => {
  const added = (k) => (name === 'direct' ? '' : ` (+${(median(name, k) - median('direct', k)).toFixed(2)})`);
  return `${name.padEnd(7)} ${median(name, 'rate').toFixed(0).padStart(6)} deliveries/s   p50 ${median(name, 'p50').toFixed(2)} ms${added('p50')}   p99 ${median(name, 'p99').toFixed(2)} ms${added('p99')}   CPU bench ${median(name, 'cpuBench').toFixed(0)}% listen ${median(name, 'cpuListen').toFixed(0)}%`;
};
console.log(
  `Deliveries sender → receiver → target (${ROUNDS} interleaved rounds of ${PER_ROUND}, ${CONCURRENCY} in flight; medians; latency until the target has it, (+added) over direct):`,
);
console.log(fmt('listen'));
console.log(fmt('bare'));
console.log(fmt('direct'));
console.log(
  `ratio   listen/bare throughput ${(median('listen', 'rate') / median('bare', 'rate')).toFixed(2)}  (listen journals and fsyncs every delivery before forwarding it)`,
);

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

child.kill('SIGINT');
await new Promise((r) => child.on('exit', r));
senderAgent.destroy();
bareAgent.destroy();
bare.close();
target.close();
rmSync(dir, { recursive: true, force: true });
console.log(`Total ${((performance.now() - started) / 1000).toFixed(0)} s`);
