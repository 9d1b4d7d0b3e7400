import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, expect, it } from 'vitest';
import { runMkt } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';
import { storedToken, signInEnv } from './helpers.js';

const ctx = useSandbox({ dirPerTest: true });
let env: Record<string, string>;
beforeEach(async () => {
  env = signInEnv(ctx.sandbox);
  const login = await runMkt(['login', '--client-id', ctx.sandbox.seed.app.client_id], ctx.dir, {
    env,
    timeoutMs: 20_000,
  });
  expect(login.code).toBe(0);
});

async function editStoredToken(
  change: (token: Record<string, unknown>) => void,
): Promise<Record<string, unknown>> {
  const file = join(ctx.dir, 'credentials.json');
  const all = JSON.parse(await readFile(file, 'utf8')) as Record<string, string>;
  const token = JSON.parse(all['default:oauth']!) as Record<string, unknown>;
  change(token);
  all['default:oauth'] = JSON.stringify(token);
  await writeFile(file, JSON.stringify(all));
  return token;
}

it('lets concurrent processes share one refresh: the rotating refresh token is spent once', async () => {
  const old = await editStoredToken((t) => (t.expires_at = Date.now() - 1000));
  // The sandbox revokes the whole grant when a spent refresh token is used again, so a second
  // spend would make some of these fail.
  const runs = await Promise.all(
    Array.from({ length: 4 }, () => runMkt(['auth', 'token'], ctx.dir, { env, timeoutMs: 20_000 })),
  );
  for (const run of runs) expect(run.stderr + run.code).toMatch(/0$/);
  const printed = new Set(runs.map((r) => r.stdout.trim()));
  expect(printed.size).toBe(1);
  const [fresh] = printed;
  expect(fresh).toMatch(/^at_/);
  expect(fresh).not.toBe(old.access_token);
  const stored = await storedToken(ctx.dir);
  expect(stored?.access_token).toBe(fresh);
  expect(stored?.refresh_token).not.toBe(old.refresh_token);
  const who = await runMkt(['whoami', '--json'], ctx.dir, { env });
  expect(who.code).toBe(0);
});

it('refreshes after a 401 and retries the request', async () => {
  const old = await editStoredToken((t) => (t.access_token = 'at_revokedbyserver'));
  const who = await runMkt(['whoami', '--json'], ctx.dir, { env });
  expect(who.stderr).not.toContain('Error');
  expect(who.code).toBe(0);
  expect(JSON.parse(who.stdout).id).toBe((old.user as { id: string }).id);
  const stored = await storedToken(ctx.dir);
  expect(stored?.access_token).not.toBe('at_revokedbyserver');
  expect(stored?.refresh_token).not.toBe(old.refresh_token);
});

it('needs the client secret to renew an expired token, and says how to give it', async () => {
  await editStoredToken((t) => (t.expires_at = Date.now() - 1000));
  // The login kept the secret it signed in with; here it is neither stored nor in the environment.
  const file = join(ctx.dir, 'credentials.json');
  const all = JSON.parse(await readFile(file, 'utf8')) as Record<string, string>;
  delete all[`site:${ctx.sandbox.siteUrl}:client-secret:${ctx.sandbox.seed.app.client_id}`];
  await writeFile(file, JSON.stringify(all));
  const res = await runMkt(['auth', 'token'], ctx.dir, { env: { ...env, MKT_CLIENT_SECRET: undefined } });
  expect(res.code).toBe(4);
  expect(res.stderr).toContain('needs the client secret');
  expect(res.stderr).toContain('MKT_CLIENT_SECRET=');
  expect(await storedToken(ctx.dir)).toBeDefined();
});

it('never sends a token to another site than the one that issued it', async () => {
  const res = await runMkt(['auth', 'status'], ctx.dir, {
    env: { ...env, MKT_SITE_URL: 'http://127.0.0.1:9' },
  });
  expect(res.code).toBe(4);
  expect(res.stderr).toContain(`Its sign-in belongs to ${ctx.sandbox.siteUrl}`);
});
