import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runServer } from 'verdaccio';
import { MKT_BIN, baseEnv, runMkt, tempDir } from '../support/cli.js';
import { typeInTerminal } from '../support/terminal.js';
import { isNewer, updateMessage } from '../../src/update/notice.js';

// Word of a newer mkt, against a real npm registry on 127.0.0.1 (Verdaccio: storage in a temporary
// folder, no uplinks), to which the test publishes mkt 0.2.0 with npm itself.

const run = promisify(execFile);
let work: { path: string; remove(): Promise<void> };
let registry: string;
let server: Server;

beforeAll(async () => {
  work = await tempDir('mkt-update-');
  const app = await runServer({
    self_path: work.path,
    storage: join(work.path, 'storage'),
    uplinks: {},
    packages: { '**': { access: '$all', publish: '$all' } },
    auth: { htpasswd: { file: join(work.path, 'htpasswd'), max_users: -1 } },
    log: { type: 'stdout', format: 'pretty', level: 'fatal' },
    web: { enable: false },
  } as never);
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as { port: number };
  registry = `http://127.0.0.1:${port}/`;
  const pkg = join(work.path, 'package');
  await mkdir(pkg);
  await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: 'mkt', version: '0.2.0' }));
  await writeFile(join(work.path, 'npmrc'), `//127.0.0.1:${port}/:_authToken=test\n`);
  await run('npm', ['publish', '--registry', registry, '--userconfig', join(work.path, 'npmrc')], {
    cwd: pkg,
  });
}, 60_000);
afterAll(async () => {
  server?.close();
  await work?.remove();
});

/** `mkt ARGS` on a pseudo-terminal (stderr a terminal); resolves with what it showed and its code. */
async function onTerminal(args: string[], env: Record<string, string>) {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const { MKT_NO_UPDATE_NOTIFIER: _, ...base } = baseEnv(work.path);
  const terminal = typeInTerminal([process.execPath, MKT_BIN, ...args].map(quote).join(' '), {
    env: { ...base, TERM: 'dumb', NO_COLOR: '1', ...env },
    timeoutMs: 20_000,
  });
  return { code: await terminal.exit, screen: terminal.screen() };
}

/** Waits for the background check to have written what the registry says. */
async function checked(
  file: string,
): Promise<{ latest?: string; checked_at?: number; notified_at?: number }> {
  for (let i = 0; i < 200; i++) {
    const state = existsSync(file) ? JSON.parse(await readFile(file, 'utf8')) : {};
    if (state.latest) return state;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the update check never wrote ${file}`);
}

describe('the update notice', () => {
  it('says once a day on a terminal that 0.2.0 is out, from a check made in the background', async () => {
    const cache = join(work.path, 'cache-terminal');
    const file = join(cache, 'update-check.json');
    const env = { MKT_CACHE_DIR: cache, MKT_UPDATE_REGISTRY: registry };
    // The first run knows nothing yet: it says nothing and starts the check.
    const first = await onTerminal(['config', 'get', 'site-url'], env);
    expect(first.code).toBe(0);
    expect(first.screen).not.toContain('new version');
    expect(await checked(file)).toMatchObject({ latest: '0.2.0' });
    const second = await onTerminal(['config', 'get', 'site-url'], env);
    expect(second.code).toBe(0);
    expect(second.screen).toContain('A new version of mkt is available: 0.1.0 → 0.2.0.');
    expect(second.screen).toContain('Update: npm install -g mkt@latest');
    // Told today: not again.
    const third = await onTerminal(['config', 'get', 'site-url'], env);
    expect(third.screen).not.toContain('new version');
    // A day later (the time it was told, moved back a day), it says so again.
    const state = JSON.parse(await readFile(file, 'utf8'));
    await writeFile(
      file,
      JSON.stringify({ ...state, notified_at: state.notified_at - 24 * 3600 * 1000 - 1 }),
    );
    expect((await onTerminal(['config', 'get', 'site-url'], env)).screen).toContain('0.1.0 → 0.2.0');
  });

  it('says nothing and checks nothing under CI, with --json or --jq, off a terminal, or with MKT_NO_UPDATE_NOTIFIER', async () => {
    const cache = join(work.path, 'cache-quiet');
    const file = join(cache, 'update-check.json');
    await mkdir(cache, { recursive: true });
    // Known, and never told: each of these would say it, but none may.
    await writeFile(file, JSON.stringify({ latest: '0.2.0', checked_at: 0 }));
    const env = { MKT_CACHE_DIR: cache, MKT_UPDATE_REGISTRY: registry };
    for (const [args, extra] of [
      [['config', 'get', 'site-url'], { CI: 'true' }],
      [['config', 'list', '--json'], {}],
      [['config', 'list', '--jq', '.profile'], {}],
      [['config', 'get', 'site-url'], { MKT_NO_UPDATE_NOTIFIER: '1' }],
    ] as const) {
      const res = await onTerminal([...args], { ...env, ...extra });
      expect(res.code, args.join(' ')).toBe(0);
      expect(res.screen, `${args.join(' ')} ${JSON.stringify(extra)}`).not.toContain('new version');
    }
    const piped = await runMkt(['config', 'get', 'site-url'], work.path, {
      env: { ...env, MKT_NO_UPDATE_NOTIFIER: undefined },
    });
    expect(piped.stderr).not.toContain('new version');
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ latest: '0.2.0', checked_at: 0 });
  });

  it('never makes a command wait: the command ends while the registry has not answered', async () => {
    let seen: () => void;
    const asked = new Promise<void>((resolve) => (seen = resolve));
    const open: Array<import('node:http').ServerResponse> = [];
    const silent = createServer((req, res) => {
      open.push(res); // never answered
      seen();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const cache = join(work.path, 'cache-silent');
      const env = {
        MKT_CACHE_DIR: cache,
        MKT_UPDATE_REGISTRY: `http://127.0.0.1:${(silent.address() as { port: number }).port}/`,
      };
      const res = await onTerminal(['config', 'get', 'site-url'], env);
      expect(res.code).toBe(0);
      await asked; // the check did ask, from its own process, after the command had ended
      expect(open.length).toBe(1);
    } finally {
      for (const res of open) res.destroy();
      silent.close();
      await rm(join(work.path, 'cache-silent'), { recursive: true, force: true });
    }
  });
});

describe('the words for each way mkt was installed', () => {
  it('npm, the standalone archive and the .deb each say how to update them', () => {
    expect(updateMessage('npm', '0.1.0', '0.2.0', '/x')).toContain('npm install -g mkt@latest');
    const archive = updateMessage('standalone', '0.1.0', '0.2.0', '/opt/mkt/');
    expect(archive).toContain(`mkt-v0.2.0-${process.platform}-${process.arch}.tar.gz and SHA256SUMS`);
    expect(archive).toContain('sha256sum -c --ignore-missing SHA256SUMS');
    expect(archive).toContain('unpack it over /opt');
    expect(updateMessage('deb', '0.1.0', '0.2.0', '/usr/lib/mkt/')).toContain('sudo dpkg -i mkt_0.2.0_');
    expect([isNewer('0.2.0', '0.1.0'), isNewer('0.1.0', '0.1.0'), isNewer('0.10.0', '0.9.9')]).toEqual([
      true,
      false,
      true,
    ]);
    expect([isNewer('1.0.0-rc.1', '0.1.0'), isNewer('0.0.9', '0.1.0')]).toEqual([false, false]);
  });
});
