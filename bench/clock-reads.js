// Reads while the business clock moves: `POST /api/v1/simulator/clock {advance_s: 365 days}` over
// 10,000 subscribed test users (about 120,000 transitions, in one transaction written in steps:
// docs/DECISIONS.md, the clock's advance), while READERS clients ask `GET /whoami` and
// `GET /entitlements` one after another with a test user's token, as an app's backend does. Measured
// as a developer meets it — the sandbox in its own process (`mkt sandbox start`), everything over
// HTTP. Reported per round: the latency of the reads sent while the advance ran (p50, p99, max, how
// many), beside the same reads on the idle sandbox just before (same run, same process), and the
// advance's own time. The target: p99 of reads during the advance under 1 s. ROUNDS rounds (3), each
// on a new sandbox, and their medians.
//
// Run alone (the machine otherwise idle): npm run build && node bench/clock-reads.js
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { developerToken } from './developer-token.js';
import { httpClient } from './http.js';
import { startSandboxProcess } from './sandbox-process.js';

const USERS = Number(process.env.BENCH_USERS ?? 10_000);
const DAYS = 365;
const READERS = Number(process.env.READERS ?? 4);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const { send, must, close } = httpClient();

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

/**
 * Bearer headers from as many grants as the requests need: a grant may make 1,000 requests a minute
 * (docs/PROTOCOL.md, rate limits), so `grant()` is asked for a new one every 900.
 */
function tokens(grant) {
  let current;
  let used = 0;
  return async () => {
    if (current === undefined || used >= 900) [current, used] = [grant(), 0];
    used++;
    return { authorization: `Bearer ${await current}` };
  };
}

/** Readers asking whoami and entitlements in turn until `until()`; answers each read's latency (ms). */
async function read(port, auth, until) {
  const latencies = [];
  await Promise.all(
    Array.from({ length: READERS }, async (_, r) => {
      for (let i = r; !until(); i++) {
        const headers = await auth();
        const started = performance.now();
        await must(send(port, 'GET', i % 2 === 0 ? '/api/v1/whoami' : '/api/v1/entitlements', headers), 200);
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies;
}

async function round() {
  const dataDir = await mkdtemp(join(tmpdir(), 'mkt-bench-clock-reads-'));
  const sb = await startSandboxProcess(dataDir);
  try {
    const { port, seed } = sb;
    const developer = tokens(() => developerToken(port, seed));
    const auth = await developer();
    const app = seed.app.id;
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < USERS) {
          next++;
          await must(
            send(port, 'POST', '/api/v1/simulator/users', await developer(), {
              app_id: app,
              plan: 'pro-monthly',
            }),
            201,
          );
        }
      }),
    );
    const user = seed.users.find((u) => u.status === 'active' && u.plan !== 'free').id;
    const reader = tokens(async () => {
      const grant = send(port, 'POST', '/api/v1/simulator/authorize', await developer(), {
        app_id: app,
        user_id: user,
      });
      return (await must(grant, 201)).access_token;
    });
    // The idle sandbox: the same reads for two seconds.
    const idleUntil = performance.now() + 2_000;
    const idle = await read(port, reader, () => performance.now() > idleUntil);
    let done = false;
    const started = performance.now();
    const advance = must(
      send(port, 'POST', '/api/v1/simulator/clock', auth, { advance_s: DAYS * 86_400 }),
      200,
    ).then((answer) => ((done = true), answer));
    const during = await read(port, reader, () => done);
    const answer = await advance;
    return { idle, during, advanceMs: performance.now() - started, transitions: answer.transitions.length };
  } finally {
    await sb.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  const results = [];
  try {
    for (let i = 0; i < ROUNDS; i++) {
      const r = await round();
      results.push(r);
      const ms = (x) => `${x.toFixed(1)} ms`;
      console.log(
        `round ${i + 1}: advance ${DAYS} days over ${USERS} users: ${r.transitions} transitions in ${(r.advanceMs / 1000).toFixed(2)} s; ` +
          `${r.during.length} reads meanwhile: p50 ${ms(quantile(r.during, 0.5))}, p99 ${ms(quantile(r.during, 0.99))}, max ${ms(Math.max(...r.during))}; ` +
          `idle (${r.idle.length} reads): p50 ${ms(quantile(r.idle, 0.5))}, p99 ${ms(quantile(r.idle, 0.99))}`,
      );
    }
  } finally {
    close();
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const p99 = median(results.map((r) => quantile(r.during, 0.99)));
  console.log(
    `median of ${ROUNDS} rounds: reads during the advance p50 ${median(results.map((r) => quantile(r.during, 0.5))).toFixed(1)} ms, ` +
      `p99 ${p99.toFixed(1)} ms (target < 1000 ms); advance ${(median(results.map((r) => r.advanceMs)) / 1000).toFixed(2)} s`,
  );
  if (!(p99 < 1000)) process.exitCode = 1;
}

await main();
