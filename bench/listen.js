// Throughput and added latency of `mkt webhooks listen` (local receiver → verify → journal → forward)
// beside a bare node:http server that verifies and forwards the same way, in interleaved rounds;
// then RSS of listen before and after 100,000 deliveries. Run: npm run build && node bench/listen.js
import { spawn } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SECRET = 'whsec_bench';
const ROUNDS = 3;
const PER_ROUND = 3_000;
const CONCURRENCY = 32;
const MEMORY_RUN = Number(process.env.BENCH_DELIVERIES ?? 100_000);
const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

const target = http.createServer((req, res) => req.resume().on('end', () => res.end()));
await new Promise((r) => target.listen(0, '127.0.0.1', r));
const targetUrl = `http://127.0.0.1:${target.address().port}/hook`;

// The baseline: verify in constant time, then forward the same bytes, nothing else.
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
      const fwd = http.request(targetUrl, { method: 'POST', agent, headers }, (r) => {
        r.resume().on('end', () => res.writeHead(202).end());
      });
      fwd.end(body);
    });
});
await new Promise((r) => bare.listen(0, '127.0.0.1', r));
const bareUrl = `http://127.0.0.1:${bare.address().port}/`;

const dir = mkdtempSync(join(tmpdir(), 'mkt-bench-'));
const child = spawn(
  process.execPath,
  [
    'bin/run.js',
    'webhooks',
    'listen',
    '--json',
    '--no-relay',
    '--forward-to',
    targetUrl,
    '--concurrency',
    '16',
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
const listenUrl = await new Promise((resolve) => {
  let buf = '';
  child.stdout.on('data', (d) => {
    buf += d;
    const ready = buf.split('\n').find((l) => l.includes('"ready"'));
    if (ready) resolve(JSON.parse(ready).receiver);
  });
});
child.stdout.resume();

let n = 0;
function delivery() {
  const body = JSON.stringify({
    event: 'user.authorized',
    timestamp: new Date().toISOString(),
    data: { user_id: `usr_${n}` },
  });
  const sig = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-marketplace-signature': sig,
      'x-marketplace-delivery': `dlv_b${n++}`,
    },
  };
}
function send(url) {
  const { body, headers } = delivery();
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers }, (res) => {
      res
        .resume()
        .on('end', () =>
          res.statusCode < 300
            ? resolve(performance.now() - started)
            : reject(new Error(`HTTP ${res.statusCode}`)),
        );
    });
    req.on('error', reject);
    req.end(body);
  });
}
async function round(url, count) {
  const times = [];
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < count) times.push(await send(url));
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  return {
    rate: count / seconds,
    p50: times[Math.floor(times.length * 0.5)],
    p99: times[Math.floor(times.length * 0.99)],
  };
}
const rss = () => Number(readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]) / 1024;

await round(listenUrl, 500); // warm-up
await round(bareUrl, 500);
const results = { listen: [], bare: [] };
for (let i = 0; i < ROUNDS; i++) {
  results.listen.push(await round(listenUrl, PER_ROUND));
  results.bare.push(await round(bareUrl, PER_ROUND));
}
const median = (xs, k) => xs.map((x) => x[k]).sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (name) =>
  `${name.padEnd(7)} ${median(results[name], 'rate').toFixed(0).padStart(6)}/s  p50 ${median(results[name], 'p50').toFixed(2)} ms  p99 ${median(results[name], 'p99').toFixed(2)} ms`;
console.log(
  `Deliveries through the receiver to a local server (${ROUNDS} interleaved rounds of ${PER_ROUND}, ${CONCURRENCY} in flight; medians):`,
);
console.log(fmt('listen'));
console.log(fmt('bare'));
console.log(
  `ratio   listen/bare throughput ${(median(results.listen, 'rate') / median(results.bare, 'rate')).toFixed(2)}  (listen fsyncs each batch to its journal)`,
);

const before = rss();
const t0 = performance.now();
let rssMid = 0;
for (let sent = 0; sent < MEMORY_RUN; sent += 10_000) {
  await round(listenUrl, Math.min(10_000, MEMORY_RUN - sent));
  if (sent === MEMORY_RUN / 2) rssMid = rss();
}
const after = rss();
console.log(
  `RSS of listen: ${before.toFixed(0)} MB before, ${rssMid.toFixed(0)} MB halfway, ${after.toFixed(0)} MB after ${MEMORY_RUN.toLocaleString()} deliveries (${((performance.now() - t0) / 1000).toFixed(0)} s)`,
);

child.kill('SIGINT');
await new Promise((r) => child.on('exit', r));
agent.destroy();
bare.close();
target.close();
rmSync(dir, { recursive: true, force: true });
