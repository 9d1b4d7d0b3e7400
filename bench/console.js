// The developer console and the request log, measured:
// 1. The console's deliveries page with 10,000 deliveries (each with one recorded attempt): the server
//    time of `GET /console/apps/{id}/deliveries` (the newest 50), the same filtered by state, and the
//    API listing it reads (`GET /api/v1/apps/{id}/deliveries?limit=50`); median and p99 of 200
//    sequential requests over loopback, after 20 warm-up requests.
// 2. `mkt logs tail --json`: the delay from a response (as its client has it) to the line of that
//    request on the tail's stdout; p50 and p99 over 1,000 requests, sent one at a time 5 ms apart.
//
// Run: npm run build && node bench/console.js
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSandbox } from '../dist/sandbox/index.js';
import { developerToken } from './developer-token.js';
import { httpClient } from './http.js';

const DELIVERIES = 10_000;
const PAGE_SAMPLES = 200;
const TAIL_REQUESTS = 1_000;
const MKT = fileURLToPath(new URL('../bin/run.js', import.meta.url));
const { send, must, close } = httpClient();

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const ms = (n) => `${n.toFixed(2)} ms`;

async function timeRequests(label, run) {
  for (let i = 0; i < 20; i++) await run();
  const times = [];
  for (let i = 0; i < PAGE_SAMPLES; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  console.log(`${label}: median ${ms(quantile(times, 0.5))}, p99 ${ms(quantile(times, 0.99))}`);
}

const dataDir = await mkdtemp(join(tmpdir(), 'mkt-bench-console-'));
const receiver = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const sandbox = await startSandbox({ dataDir, port: 0, deliveryTimeoutMs: 5_000 });
try {
  const port = sandbox.port;
  const token = await developerToken(port, sandbox.seed, 'apps:write identity:read entitlements:read');
  const auth = { authorization: `Bearer ${token}` };
  const appId = sandbox.seed.app.id;
  await must(
    send(port, 'PATCH', `/api/v1/apps/${appId}`, auth, {
      webhook_url: `http://127.0.0.1:${receiver.address().port}/hooks`,
    }),
    200,
  );

  // 10,000 deliveries, each delivered once (so each has an attempt), 32 at a time.
  const started = performance.now();
  const user = sandbox.seed.users[0].id;
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < DELIVERIES) {
        next++;
        await must(
          send(port, 'POST', '/api/v1/simulator/events', auth, {
            app_id: appId,
            event: 'user.authorized',
            data: { user_id: user, app_id: appId, scopes: ['identity:read'] },
            synthetic: true,
          }),
          201,
        ).catch(async () =>
          must(
            send(port, 'POST', '/api/v1/simulator/events', auth, {
              app_id: appId,
              event: 'user.authorized',
              data: { user_id: user, app_id: appId, scopes: ['identity:read'] },
            }),
            201,
          ),
        );
      }
    }),
  );
  console.log(`${DELIVERIES} deliveries made in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  // The console, signed in as the developer.
  const link = await sandbox.consoleLink();
  const enter = await send(port, 'GET', new URL(link.url).pathname + new URL(link.url).search);
  const cookie = String(enter.headers['set-cookie']).split(';')[0];
  const page = async (path) => {
    const res = await send(port, 'GET', path, { cookie });
    if (res.status !== 200 || !res.text.includes('dlv_'))
      throw new Error(`console page answered ${res.status}`);
  };
  await timeRequests(`console deliveries page (newest 50 of ${DELIVERIES})`, () =>
    page(`/console/apps/${appId}/deliveries`),
  );
  await timeRequests('console deliveries page, ?state=succeeded', () =>
    page(`/console/apps/${appId}/deliveries?state=succeeded`),
  );
  await timeRequests('API GET /apps/{id}/deliveries?limit=50', async () =>
    must(send(port, 'GET', `/api/v1/apps/${appId}/deliveries?limit=50`, auth), 200),
  );

  // logs tail: the delay from a response to its line.
  const tail = spawn(process.execPath, [MKT, 'logs', 'tail', '--app', appId, '--json', '--path', '/whoami'], {
    env: {
      ...process.env,
      MKT_SITE_URL: sandbox.siteUrl,
      MKT_ACCESS_TOKEN: token,
      MKT_CONFIG_DIR: dataDir,
      MKT_CREDENTIAL_STORE: 'file',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const seenAt = new Map();
  const waiters = new Map();
  let buffer = '';
  tail.stdout.setEncoding('utf8');
  tail.stdout.on('data', (chunk) => {
    const now = performance.now();
    buffer += chunk;
    const lines = buffer.split('\n');
    buffer = lines.pop();
    for (const line of lines) {
      const id = JSON.parse(line).id;
      seenAt.set(id, now);
      waiters.get(id)?.();
    }
  });
  await new Promise((resolve) => tail.stderr.on('data', (d) => String(d).includes('"ready"') && resolve()));
  const delays = [];
  for (let i = 0; i < TAIL_REQUESTS; i++) {
    const res = await send(port, 'GET', '/api/v1/whoami', auth);
    const answered = performance.now();
    const id = res.headers['x-request-id'];
    if (!seenAt.has(id)) await new Promise((resolve) => waiters.set(id, resolve));
    delays.push(seenAt.get(id) - answered);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  tail.kill('SIGINT');
  delays.sort((a, b) => a - b);
  console.log(
    `logs tail, response to line (${TAIL_REQUESTS} requests): p50 ${ms(quantile(delays, 0.5))}, p99 ${ms(quantile(delays, 0.99))}`,
  );
} finally {
  await sandbox.close();
  receiver.close();
  close();
  await rm(dataDir, { recursive: true, force: true });
}
