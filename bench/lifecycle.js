// The sandbox under business time: `POST /api/v1/simulator/clock {advance_s: 365 days}` over 10,000
// subscribed test users of mixed plans and payment behaviours (about 110,000 transitions: renewals,
// declined renewals, retries, expiries), measured as a developer meets it — the sandbox in its own
// process (`mkt sandbox start`), the advance over HTTP, the webhook deliveries it causes drained to
// a local receiver. Reported: wall time of the advance, transitions per second, the sandbox's peak
// resident memory (VmHWM from /proc), and, in the same run, the floor: the same records (subscription
// rows, charges, deliveries) written durably to a database of the same schema in one transaction,
// without the lifecycle logic. Then the deliveries drain: every one arrives once. ROUNDS rounds (3),
// each on a new sandbox, and their median.
//
// Run: npm run build && node bench/lifecycle.js
import { randomBytes } from 'node:crypto';
import { closeSync, fdatasyncSync, openSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CACHE_KIB } from '../build/sandbox/kernel/storage/database.js';
import { DATABASE_FILE, openDatabase } from '../build/sandbox/kernel/storage/database.js';
import { developerToken } from './developer-token.js';
import { httpClient } from './http.js';
import { startSandboxProcess } from './sandbox-process.js';

const USERS = Number(process.env.BENCH_USERS ?? 10_000);
const DAYS = 365;
/** Rounds, each on a new sandbox: the advance's time moves with the machine's load far more than the floor's. */
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const { send, must, close } = httpClient();

/** The mix: mostly monthly plans that pay, some that decline renewals, trials, annual, one-time, free. */
function profile(i) {
  const r = i % 200;
  if (r < 172) return { plan: 'pro-monthly' };
  if (r < 186) return { plan: 'pro-monthly', payment_behaviour: 'declines_renewals' };
  if (r < 192) return { plan: 'pro-monthly', trial_days: 14 };
  if (r < 194) return { plan: 'pro-monthly', trial_days: 14, payment_behaviour: 'declines' };
  if (r < 196) return { plan: 'pro-annual' };
  if (r < 198) return { plan: 'lifetime', payment_behaviour: 'declines_renewals' };
  return { plan: 'free' };
}

/** The same records, written durably in one transaction to a database of the same schema, without the logic. */
async function floor(dataDir, answer) {
  const { db, lock } = await openDatabase(dataDir);
  db.exec(`PRAGMA cache_size = ${CACHE_KIB}`); // as the sandbox's connection
  const subs = new Map();
  for (const t of answer.transitions) subs.set(t.user_id, t);
  db.exec('BEGIN IMMEDIATE');
  const insertSub = db.prepare(
    `INSERT INTO subscriptions (app_id, user_id, plan, status, expires_at, cancelled_at, api_calls, created_at, next_transition_at) VALUES (?, ?, ?, 'active', ?, NULL, 0, ?, ?)`,
  );
  for (const [user, t] of subs) insertSub.run(t.app_id, user, t.plan, t.at, t.at, 0);
  db.exec('COMMIT');
  const started = performance.now();
  db.exec('BEGIN IMMEDIATE');
  const upsert = db.prepare(
    `UPDATE subscriptions SET status = ?, expires_at = ?, api_calls = 0, next_transition_at = ?, periods = periods + 1, period_end = ?, failures = ?, charges = charges + 1, next_kind = ? WHERE app_id = ? AND user_id = ?`,
  );
  const pay = db.prepare(
    'INSERT INTO payments (id, app_id, user_id, plan, amount, currency, outcome, kind, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const delivery = db.prepare(
    'INSERT INTO deliveries (app_id, seq, id, event, created_at, body, signature) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  let seq = 0;
  for (const t of answer.transitions) {
    const at = Date.parse(t.at);
    upsert.run(t.to, t.at, at + 2_592_000_000, at + 2_592_000_000, 0, 'renew', t.app_id, t.user_id);
    if (t.payment)
      pay.run(
        t.payment.id,
        t.app_id,
        t.user_id,
        t.plan,
        t.payment.amount,
        t.payment.currency,
        t.payment.outcome,
        t.payment.kind,
        t.at,
      );
    for (const e of t.events) {
      const body = JSON.stringify({ event: e.event, timestamp: t.at, data: e.data });
      delivery.run(
        t.app_id,
        ++seq,
        `dlv_${randomBytes(12).toString('hex')}`,
        e.event,
        t.at,
        body,
        'sha256=' + '0'.repeat(64),
      );
    }
  }
  db.exec('COMMIT');
  // Durable as the sandbox's answer is: the database runs with synchronous=NORMAL, so a commit is
  // on disk once its write-ahead log is fsync'd (src/sandbox/kernel/storage/ledger.ts does the same).
  const wal = openSync(join(dataDir, `${DATABASE_FILE}-wal`), 'r');
  fdatasyncSync(wal);
  closeSync(wal);
  const ms = performance.now() - started;
  db.close();
  lock.close();
  return ms;
}

/** One round: a new sandbox, its users, the advance, the deliveries drained, then the floor. */
async function round() {
  const dataDir = await mkdtemp(join(tmpdir(), 'mkt-bench-life-'));
  const floorDir = await mkdtemp(join(tmpdir(), 'mkt-bench-life-floor-'));
  const received = new Set();
  let duplicates = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = req.headers['x-marketplace-delivery'];
      if (received.has(id)) duplicates++;
      received.add(id);
      res.writeHead(200).end();
    });
  });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  const sb = await startSandboxProcess(dataDir);
  try {
    const { port, seed } = sb;
    const auth = { authorization: `Bearer ${await developerToken(port, seed)}` };
    const app = seed.app.id;
    for (const plan of [
      {
        id: 'pro-annual',
        name: 'Pro (annual)',
        kind: 'annual',
        price: { amount: 9900, currency: 'USD' },
        features: ['basic', 'export'],
      },
      {
        id: 'lifetime',
        name: 'Lifetime',
        kind: 'one_time',
        price: { amount: 19900, currency: 'USD' },
        features: ['basic', 'export'],
      },
    ])
      await must(send(port, 'POST', `/api/v1/apps/${app}/plans`, auth, plan), 201);
    const setupStart = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < USERS) {
          const i = next++;
          await must(
            send(port, 'POST', '/api/v1/simulator/users', auth, { app_id: app, ...profile(i) }),
            201,
          );
        }
      }),
    );
    const setupS = (performance.now() - setupStart) / 1000;
    await must(
      send(port, 'PATCH', `/api/v1/apps/${app}`, auth, {
        webhook_url: `http://127.0.0.1:${receiver.address().port}/hooks`,
      }),
      200,
    );
    const before = await sb.peakMiB();
    const started = performance.now();
    const answer = await must(
      send(port, 'POST', '/api/v1/simulator/clock', auth, { advance_s: DAYS * 86_400 }),
      200,
    );
    const advanceMs = performance.now() - started;
    const peak = await sb.peakMiB();
    const events = answer.transitions.reduce((n, t) => n + t.events.length, 0);
    const drainStart = performance.now();
    while (received.size < events && performance.now() - drainStart < 600_000)
      await new Promise((r) => setTimeout(r, 50));
    const drainS = (performance.now() - drainStart) / 1000;
    await sb.stop();
    const floorMs = await floor(floorDir, answer);
    const byKind = {};
    for (const t of answer.transitions) byKind[t.transition] = (byKind[t.transition] ?? 0) + 1;
    return {
      setupS,
      advanceMs,
      floorMs,
      n: answer.transitions.length,
      byKind,
      events,
      before,
      peak,
      drainS,
      received: received.size,
      duplicates,
    };
  } finally {
    receiver.close();
    await rm(dataDir, { recursive: true, force: true });
    await rm(floorDir, { recursive: true, force: true });
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const results = [];
  try {
    for (let i = 0; i < ROUNDS; i++) {
      const r = await round();
      results.push(r);
      console.log(
        `round ${i + 1}: setup ${USERS} users over HTTP ${r.setupS.toFixed(1)} s; advance ${DAYS} days: ${r.n} transitions in ${(r.advanceMs / 1000).toFixed(2)} s = ${Math.round(r.n / (r.advanceMs / 1000))} transitions/s; floor ${(r.floorMs / 1000).toFixed(2)} s; advance / floor = ${(r.advanceMs / r.floorMs).toFixed(2)}; peak ${r.peak.toFixed(0)} MiB (${r.before.toFixed(0)} before); deliveries ${r.received} of ${r.events} in ${r.drainS.toFixed(1)} s, duplicates ${r.duplicates}`,
      );
      if (r.received !== r.events || r.duplicates > 0) process.exitCode = 1;
    }
  } finally {
    close();
  }
  const last = results.at(-1);
  console.log(`  by kind: ${JSON.stringify(last.byKind)}; events sent: ${last.events}`);
  console.log(
    `median of ${ROUNDS} rounds: advance ${(median(results.map((r) => r.advanceMs)) / 1000).toFixed(2)} s, floor ${(median(results.map((r) => r.floorMs)) / 1000).toFixed(2)} s, advance / floor ${median(results.map((r) => r.advanceMs / r.floorMs)).toFixed(2)}; peak ${Math.max(...results.map((r) => r.peak)).toFixed(0)} MiB`,
  );
}

await main();
