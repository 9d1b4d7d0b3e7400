// Throughput of the built-in sandbox at two data sizes (1,000 users; and 100,000 users, 1,000 apps and
// 100,000 past deliveries), in interleaved rounds of one run: reads (GET /api/v1/whoami and
// GET /api/v1/entitlements with an API key) and writes (PATCH /api/v1/simulator/users/{id}, each
// answered only once it is fsync'd to the sandbox's log), over loopback with concurrent keep-alive
// clients; plus the cost of one webhook delivery.
//
// Rate limits: a live key allows 1,000 requests a minute, so the measured requests rotate over
// KEYS live keys created for the run (KEYS x 1,000 a minute, more than the run sends); every answer is checked to be a 200.
// Setup traffic and writes use a developer token with apps:write (from the consent page, as a person
// gets it), which is not key-limited.
//
// Run: npm run build && node bench/sandbox.js
import { Agent, createServer, request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox } from '../dist/sandbox/index.js';

const CONCURRENCY = 32;
const REQUESTS = 10_000;
const ROUNDS = 5;
const KEYS = 300;
const SMALL = { apps: 1, users: 1_000, deliveries: 0 };
const LARGE = { apps: 1_000, users: 100_000, deliveries: 100_000 };
const WRITES = 5_000;
const DELIVERY_SAMPLES = 200;

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

function send(port, method, path, headers = {}, body) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined || typeof body === 'string' ? body : JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: payload === undefined ? headers : { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode,
            headers: res.headers,
            text,
            json: text && res.headers['content-type']?.includes('json') ? JSON.parse(text) : undefined,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function must(promise, status) {
  const res = await promise;
  if (res.status !== status)
    throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.json)}`);
  return res.json;
}

/** Runs `count` jobs with `workers` workers. */
async function pool(count, job, workers = CONCURRENCY) {
  let next = 0;
  const worker = async () => {
    while (next < count) await job(next++);
  };
  await Promise.all(Array.from({ length: workers }, worker));
}

/** A developer token with apps:write: the consent page, Approve as the developer, the token endpoint. */
async function developerToken(port, seed) {
  const redirectUri = 'http://127.0.0.1:9/callback';
  const query = new URLSearchParams({
    client_id: seed.app.client_id,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'apps:write identity:read entitlements:read',
  });
  const page = await send(port, 'GET', `/oauth/authorize?${query}`);
  const form = new URLSearchParams({ user_id: seed.developer.id, decision: 'approve' });
  for (const m of page.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    form.set(m[1], m[2]);
  const consent = await send(
    port,
    'POST',
    '/oauth/authorize',
    { 'content-type': 'application/x-www-form-urlencoded' },
    form.toString(),
  );
  const code = new URL(consent.headers.location).searchParams.get('code');
  const tokens = await must(
    send(
      port,
      'POST',
      '/api/oauth/token',
      {},
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        client_id: seed.app.client_id,
        client_secret: seed.app.client_secret,
      },
    ),
    200,
  );
  return tokens.access_token;
}

async function prepare(name, size) {
  const dataDir = await mkdtemp(join(tmpdir(), `mkt-bench-${name}-`));
  const sb = await startSandbox({ dataDir, port: 0 });
  const { port, seed } = sb;
  const auth = { authorization: `Bearer ${await developerToken(port, seed)}` };
  const keys = [];
  for (let i = 0; i < KEYS; i++) {
    keys.push(
      (await must(send(port, 'POST', `/api/v1/apps/${seed.app.id}/keys`, auth, { mode: 'live' }), 201)).key,
    );
  }
  const users = seed.users.map((u) => u.id);
  const started = performance.now();
  // Setup runs with more clients in flight: group commit then shares each fsync among more writes.
  await pool(
    size.apps - 1,
    (i) => must(send(port, 'POST', '/api/v1/apps', auth, { name: `Bench app ${i}` }), 201),
    128,
  );
  await pool(
    size.users - users.length,
    async () => {
      const user = await must(
        send(port, 'POST', '/api/v1/simulator/users', auth, {
          app_id: seed.app.id,
          plan: 'free',
          status: 'active',
        }),
        201,
      );
      users.push(user.id);
    },
    128,
  );
  await pool(
    size.deliveries,
    () =>
      must(
        send(port, 'POST', '/api/v1/simulator/events', auth, { app_id: seed.app.id, event: 'user.revoked' }),
        201,
      ),
    128,
  );
  console.log(
    `${name}: ${size.apps} apps, ${size.users} users, ${size.deliveries} deliveries in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return { name, sb, dataDir, port, seed, keys, users, auth };
}

/** Writes per second: PATCH /simulator/users/{id} (a status change), each answered once on disk. */
async function measureWrites(target) {
  let bad = 0;
  const started = performance.now();
  await pool(WRITES, async (i) => {
    const user = target.users[(i * 7919) % target.users.length];
    const res = await send(target.port, 'PATCH', `/api/v1/simulator/users/${user}`, target.auth, {
      app_id: target.seed.app.id,
      status: i % 2 ? 'active' : 'trialing',
    });
    if (res.status !== 200) bad++;
  });
  const seconds = (performance.now() - started) / 1000;
  if (bad > 0) throw new Error(`${bad} of ${WRITES} writes on ${target.name} were not 200`);
  return WRITES / seconds;
}

async function measure(target, endpoint) {
  if (endpoint === 'writes') return measureWrites(target);
  let bad = 0;
  let k = 0;
  const started = performance.now();
  await pool(REQUESTS, async (i) => {
    const key = target.keys[k++ % target.keys.length];
    const path =
      endpoint === 'whoami'
        ? '/api/v1/whoami'
        : `/api/v1/entitlements?user_id=${target.users[(i * 7919) % target.users.length]}`;
    const res = await send(target.port, 'GET', path, { 'x-api-key': key });
    if (res.status !== 200) bad++;
  });
  const seconds = (performance.now() - started) / 1000;
  if (bad > 0) throw new Error(`${bad} of ${REQUESTS} ${endpoint} requests on ${target.name} were not 200`);
  return REQUESTS / seconds;
}

async function deliveryCost(target) {
  let onArrival = () => {};
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      onArrival(performance.now());
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${receiver.address().port}/hook`;
  const key = target.auth;
  await must(
    send(target.port, 'PATCH', `/api/v1/apps/${target.seed.app.id}`, key, { webhook_url: url }),
    200,
  );
  const samples = [];
  for (let i = 0; i < DELIVERY_SAMPLES; i++) {
    const started = performance.now();
    // One delivery at a time, so the next arrival is this delivery.
    const arrived = new Promise((resolve) => (onArrival = resolve));
    await must(
      send(target.port, 'POST', '/api/v1/simulator/events', key, {
        app_id: target.seed.app.id,
        event: 'user.revoked',
      }),
      201,
    );
    const at = await Promise.race([arrived, new Promise((r) => setTimeout(() => r(undefined), 5_000))]);
    if (at === undefined) throw new Error('a delivery did not arrive');
    samples.push(at - started);
  }
  receiver.closeAllConnections();
  receiver.close();
  samples.sort((a, b) => a - b);
  return {
    median: samples[Math.floor(samples.length / 2)],
    p95: samples[Math.floor(samples.length * 0.95)],
    n: samples.length,
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const benchStarted = performance.now();
const ENDPOINTS = ['whoami', 'entitlements', 'writes'];
const small = await prepare('small', SMALL);
const large = await prepare('large', LARGE);
const results = { small: {}, large: {} };
for (const target of [small, large]) for (const e of ENDPOINTS) results[target.name][e] = [];
for (let i = 0; i < 2; i++) {
  for (const target of [small, large]) for (const e of ENDPOINTS) await measure(target, e); // warm-up
}
for (let round = 1; round <= ROUNDS; round++) {
  const line = [];
  for (const target of round % 2 ? [small, large] : [large, small]) {
    for (const endpoint of ENDPOINTS) {
      const rps = await measure(target, endpoint);
      results[target.name][endpoint].push(rps);
      line.push(`${target.name} ${endpoint} ${rps.toFixed(0)}/s`);
    }
  }
  console.log(`round ${round}: ${line.join(', ')}`);
}
console.log(
  `\n${REQUESTS} reads / ${WRITES} writes per measurement, ${CONCURRENCY} keep-alive clients, ${KEYS} live keys in rotation; median of ${ROUNDS} rounds`,
);
for (const endpoint of ENDPOINTS) {
  const s = median(results.small[endpoint]);
  const l = median(results.large[endpoint]);
  console.log(
    `${endpoint.padEnd(13)} small ${s.toFixed(0).padStart(6)} req/s   large ${l.toFixed(0).padStart(6)} req/s   large/small ${(l / s).toFixed(2)}`,
  );
}
for (const target of [small, large]) {
  const cost = await deliveryCost(target);
  console.log(
    `delivery (${target.name}): POST /simulator/events -> receipt at a local server: median ${cost.median.toFixed(2)} ms, p95 ${cost.p95.toFixed(2)} ms (${cost.n} samples)`,
  );
}
agent.destroy();
for (const target of [small, large]) {
  await target.sb.close();
  await rm(target.dataDir, { recursive: true, force: true });
}
console.log(`total ${((performance.now() - benchStarted) / 1000).toFixed(1)} s`);
