import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tempDir } from '../support/cli.js';

// The README's first command is `npm ci && npm run demo`; `npm run demo` builds, then runs
// scripts/demo.js. The build is CI's own step before the tests, so this runs the script itself, as
// a newcomer's shell would (no terminal, none of the caller's MKT_ settings), and checks that it
// walks every step through to the verified delivery and leaves nothing behind.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let tmp: { path: string; remove(): Promise<void> };
beforeAll(async () => {
  tmp = await tempDir('mkt-demo-test-');
});
afterAll(() => tmp.remove());

it('npm run demo walks the newcomer path to a verified delivery and cleans up', async () => {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('MKT_')) env[k] = v;
  env.TMPDIR = tmp.path;
  env.NO_COLOR = '1';
  const child = spawn(process.execPath, [join(ROOT, 'scripts/demo.js')], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));

  expect(out, out).toMatch(/Done\./);
  expect(code).toBe(0);
  // Every step printed its command, in order, and the last one is the event's arrival.
  const steps = [...out.matchAll(/^(\d+)\. (.+)\n\$ /gm)].map((m) => Number(m[1]));
  expect(steps.length).toBeGreaterThanOrEqual(8);
  expect(steps).toEqual(steps.map((_, i) => i + 1));
  expect(out).toMatch(
    /✓ Your server received subscription\.created \(\S+\) for usr_\S+; its own signature check passed\./,
  );
  expect(out).not.toMatch(/The demo stopped/);
  // The app it creates is the one it goes on with: the default app, the plan's, the listener's.
  const created = /^\$ mkt apps create .*\n(?:.*\n)*?\s+(app_\w+)$/m.exec(out)![1]!;
  const seeded = /^\s+App:\s+.*\((app_\w+)\)/m.exec(out)![1]!;
  expect(created).not.toBe(seeded);
  expect(out).toContain(`$ mkt apps use ${created}`);
  expect(out).toMatch(new RegExp(`Receiving on the relay stream of ${created} `));
  expect(out).not.toMatch(new RegExp(`--app ${seeded}`));
  // Its temporary folder (config, data, credentials) is gone.
  expect(await readdir(tmp.path)).toEqual([]);
}, 180_000);
