// Fifty mkt processes changing settings or signing in at once: every value is kept (each
// read-modify-write of config.json and credentials.json holds its lock and reads again under it).
import { describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runMkt } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';

const ctx = useSandbox({ dirPerTest: true });
const KEYS = ['app', 'client-id', 'site-url'] as const;
const value = (key: string, i: number) =>
  key === 'app' ? `app_${i}` : key === 'client-id' ? `client_${i}` : `http://127.0.0.1:${9000 + i}`;

describe('parallel writers', () => {
  it('keeps all of 50 settings written by 50 parallel `mkt config set`', async () => {
    // 17 profiles × 3 keys (three keys in parallel on one profile too), less one: 50 processes.
    const jobs = Array.from({ length: 50 }, (_, n) => ({
      profile: `p${Math.floor(n / 3)}`,
      key: KEYS[n % 3]!,
    }));
    const results = await Promise.all(
      jobs.map((j, n) => runMkt(['config', 'set', j.key, value(j.key, n), '--profile', j.profile], ctx.dir)),
    );
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const config = JSON.parse(await readFile(join(ctx.dir, 'config.json'), 'utf8'));
    const lost = jobs.filter((j, n) => config.profiles[j.profile]?.[j.key] !== value(j.key, n));
    expect(lost).toEqual([]);
  }, 180_000);

  it('keeps all of 50 keys stored by 50 parallel `mkt login --with-api-key`', async () => {
    const key = ctx.sandbox.seed.test_key;
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, n) =>
        runMkt(['login', '--with-api-key', '--profile', `p${n}`], ctx.dir, {
          env: { MKT_SITE_URL: ctx.sandbox.siteUrl },
          input: `${key}\n`,
        }),
      ),
    );
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const secrets = JSON.parse(await readFile(join(ctx.dir, 'credentials.json'), 'utf8'));
    const lost = Array.from({ length: 50 }, (_, n) => `p${n}`).filter(
      (p) => JSON.parse(secrets[`${p}:api-key`] ?? '{}').key !== key,
    );
    expect(lost).toEqual([]);
  }, 180_000);
});
