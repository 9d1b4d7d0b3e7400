import { execFileSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { tempDir } from '../support/cli.js';
import {
  developerToken,
  killAllSandboxProcesses,
  startSandboxProcess,
  startTestSandbox,
  type SandboxProcess,
} from '../support/sandbox.js';
import { call } from './helpers.js';

// An advance of the business clock is all or nothing, whatever fails in it (docs/DECISIONS.md, the
// clock's advance): a transition that throws half-way (a subscription row with an impossible date),
// or a disk that fills (a full tmpfs). Afterwards every table holds exactly what it held
// before, also after a restart.

let dir: { path: string; remove(): Promise<void> };
let dataDir: string;
let sb: Sandbox | undefined;
const mounts: string[] = [];
beforeEach(async () => {
  dir = await tempDir();
  dataDir = join(dir.path, 'sandbox');
});
afterEach(async () => {
  killAllSandboxProcesses();
  await sb?.close();
  sb = undefined;
  for (const m of mounts.splice(0)) execFileSync('umount', ['-l', m]);
  await dir.remove();
});

const TABLES = ['subscriptions', 'payments', 'deliveries', 'pending_deliveries', 'delivery_seqs', 'meta'];

/** Every row of the tables an advance writes, read from the database file itself. */
function contents(): Record<string, unknown[]> {
  const db = new DatabaseSync(join(dataDir, 'sandbox.sqlite'), { readOnly: true });
  try {
    return Object.fromEntries(TABLES.map((t) => [t, db.prepare(`SELECT * FROM ${t} ORDER BY rowid`).all()]));
  } finally {
    db.close();
  }
}

/** `count` monthly subscribers and `annual` yearly ones of the seeded app, made with the developer token. */
async function subscribers(
  target: { siteUrl: string; seed: Sandbox['seed'] },
  token: string,
  count: number,
  annual = 0,
) {
  const peer = target as Sandbox;
  if (annual > 0) {
    const plan = await call(peer, 'POST', `/api/v1/apps/${target.seed.app.id}/plans`, {
      token,
      body: {
        id: 'pro-annual',
        name: 'Annual',
        kind: 'annual',
        price: { amount: 9900, currency: 'USD' },
        features: ['a'],
      },
    });
    expect(plan.status).toBe(201);
  }
  for (let i = 0; i < count + annual; i++) {
    const res = await call(peer, 'POST', '/api/v1/simulator/users', {
      token,
      body: { app_id: target.seed.app.id, plan: i < count ? 'pro-monthly' : 'pro-annual' },
    });
    expect(res.status).toBe(201);
  }
}

describe('an advance that fails half-way leaves nothing behind', () => {
  it('a transition that throws half-way (a damaged period anchor): 500, every table as before, also after a restart', async () => {
    sb = await startTestSandbox({ dataDir });
    const token = await developerToken(sb, ['apps:write']);
    await subscribers(sb, token, 20, 2);
    const clock = async () => (await call(sb!, 'GET', '/api/v1/simulator/clock', { token })).json;
    const offset = (await clock()).offset_s;
    await sb.close();
    // One annual subscription's period anchor is past the last date JavaScript can hold: its first
    // renewal, a year on, is charged, then throws "Invalid time value" as it writes its next period,
    // after eleven months of monthly renewals were written in the same transaction (the error of
    // the +275760 date of issue 34, where the charges before it stayed).
    const outside = new DatabaseSync(join(dataDir, 'sandbox.sqlite'));
    const damaged = `UPDATE subscriptions SET anchor_at = ? WHERE rowid = (SELECT max(rowid) FROM subscriptions WHERE plan = 'pro-annual')`;
    const anchor = Number(
      outside
        .prepare(
          `SELECT anchor_at FROM subscriptions WHERE rowid = (SELECT max(rowid) FROM subscriptions WHERE plan = 'pro-annual')`,
        )
        .get()!.anchor_at,
    );
    outside.prepare(damaged).run(8_700_000_000_000_000);
    outside.close();
    const before = contents();
    sb = await startTestSandbox({ dataDir });
    const moved = await call(sb, 'POST', '/api/v1/simulator/clock', {
      token,
      body: { advance_s: 400 * 86_400 },
    });
    expect(moved.status).toBe(500);
    expect(moved.json.error.message).toMatch(/Invalid time value/);
    expect((await clock()).offset_s).toBe(offset);
    await sb.close();
    expect(contents()).toEqual(before);
    // Repaired, restarted: still as before, and the advance now goes through.
    const repair = new DatabaseSync(join(dataDir, 'sandbox.sqlite'));
    repair.prepare(damaged).run(anchor);
    repair.close();
    sb = await startTestSandbox({ dataDir });
    expect((await clock()).offset_s).toBe(offset);
    const again = await call(sb, 'POST', '/api/v1/simulator/clock', {
      key: sb.seed.test_key,
      body: { advance_s: 400 * 86_400 },
    });
    expect(again.status).toBe(200);
    expect(again.json.transitions.length).toBeGreaterThan(20 * 13);
  }, 60_000);

  it('a disk that fills during a ten-year advance: 507, every table as before, also after kill -9', async () => {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m,mode=0700', 'tmpfs', dataDir]);
    mounts.push(dataDir);
    let p: SandboxProcess = await startSandboxProcess(dataDir, dir.path);
    const token = await developerToken(p, ['apps:write']);
    await subscribers(p, token, 60);
    await p.kill9();
    const before = contents();
    p = await startSandboxProcess(dataDir, dir.path);
    // Room for the first of the advance's writes, not for ten years of 60 renewals a month.
    const free = Number(execFileSync('df', ['--output=avail', '-B1', dataDir]).toString().split('\n')[1]);
    await writeFile(join(dataDir, 'filler'), Buffer.alloc(Math.max(0, free - 600_000)));
    const peer = p as unknown as Sandbox;
    const moved = await call(peer, 'POST', '/api/v1/simulator/clock', {
      token,
      body: { advance_s: 10 * 365 * 86_400 },
    });
    expect(moved.status).toBe(507);
    expect(moved.json.error.code).toBe('insufficient_storage');
    // Reads still answer, from the state before.
    const clock = await call(peer, 'GET', '/api/v1/simulator/clock', { token });
    expect(clock.json.offset_s).toBe(0);
    await p.kill9();
    await rm(join(dataDir, 'filler'));
    expect(contents()).toEqual(before);
    p = await startSandboxProcess(dataDir, dir.path);
    const restarted = await call(p as unknown as Sandbox, 'GET', '/api/v1/simulator/clock', {
      key: p.seed.test_key,
    });
    expect(restarted.json.offset_s).toBe(0);
    await p.kill9();
  }, 90_000);
});
