// `mkt init` refusing what it must, before anything is registered or written: no terminal, a folder
// that is not empty (the hint keeps --name and names a free folder), a folder others can write, a
// site whose answer would add lines to .env; and `mkt apps rotate-secret` in a project updating its
// .env, `mkt dev` warning when .env's secret is stale.
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMkt, startMkt, tempDir } from '../support/cli.js';
import { developerToken, useSandbox } from '../support/sandbox.js';
import { freePort, startServer } from '../support/server.js';
import { pathWith, SYSTEM_BIN } from './helpers.js';

describe('mkt init', () => {
  const ctx = useSandbox({ dirPerTest: true });
  const asDeveloper = async () => ({
    MKT_SITE_URL: ctx.sandbox.siteUrl,
    MKT_API_KEY: undefined,
    MKT_ACCESS_TOKEN: await developerToken(ctx.sandbox, ['apps:write']),
  });
  const appNames = async (env: Record<string, string | undefined>) =>
    (JSON.parse((await ctx.mkt(['apps', 'list', '--json'], env)).stdout) as Array<{ name: string }>).map(
      (a) => a.name,
    );

  it('refuses without a terminal in one sentence naming the flags it needs (exit 2)', async () => {
    const folder = await tempDir();
    const r = await runMkt(['init'], ctx.dir, { env: ctx.env, cwd: folder.path });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'mkt init needs --name NAME and --template node|python when it cannot ask (no terminal).',
    );
    await folder.remove();
  });

  it('refuses a folder that is not empty before anything is registered; the hint names a free folder and keeps --name', async () => {
    const folder = await tempDir();
    await mkdir(join(folder.path, 'my-app'));
    await writeFile(join(folder.path, 'my-app', 'notes.txt'), 'mine');
    const env = await asDeveloper();
    const r = await runMkt(['init', 'my-app', '--name', 'Shop Helper', '--template', 'node'], ctx.dir, {
      env,
      cwd: folder.path,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('my-app is not empty; give mkt init a new or empty folder.');
    expect(r.stderr).toContain('mkt init my-app-2 --name "Shop Helper" --template node');
    expect(await appNames(env)).not.toContain('Shop Helper');
    await folder.remove();
  });

  it('refuses an empty folder others can write (0777) before anything is registered', async () => {
    const folder = await tempDir();
    const shared = join(folder.path, 'shared');
    await mkdir(shared);
    await chmod(shared, 0o777);
    const env = await asDeveloper();
    const r = await runMkt(['init', 'shared', '--name', 'Open Door', '--template', 'python'], ctx.dir, {
      env,
      cwd: folder.path,
    });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/The project folder .*shared is writable by others \(mode 777\)/);
    expect(await appNames(env)).not.toContain('Open Door');
    await folder.remove();
  });

  it("refuses a site's client_id with a line break: nothing written, the app it registered deleted", async () => {
    const site = await startServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'POST' && req.url!.endsWith('/apps')) {
        res.statusCode = 201;
        return res.end(
          JSON.stringify({
            id: 'app_hostile1',
            name: 'X',
            client_id: 'cid_x\nNODE_OPTIONS=--require /tmp/pwn.cjs',
            client_secret: 'cs_0123456789abcdef0123',
            redirect_uris: [],
          }),
        );
      }
      if (req.url!.endsWith('/webhook-secret'))
        return res.end(JSON.stringify({ webhook_secret: 'whsec_0123456789abcdef' }));
      if (req.method === 'DELETE') return ((res.statusCode = 204), res.end());
      res.statusCode = 404;
      res.end(JSON.stringify({ error: { code: 'not_found', message: 'no' } }));
    });
    const folder = await tempDir();
    const r = await runMkt(['init', 'app', '--name', 'X', '--template', 'node'], ctx.dir, {
      env: { MKT_SITE_URL: site.url, MKT_API_KEY: undefined, MKT_ACCESS_TOKEN: 'at_test_token_0123456789' },
      cwd: folder.path,
    });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/The value of MKT_CLIENT_ID holds a control character \(U\+000A/);
    expect(existsSync(join(folder.path, 'app'))).toBe(false);
    expect(site.seen.map((s) => `${s.method} ${s.url}`)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^DELETE .*\/apps\/app_hostile1$/)]),
    );
    await site.stop();
    await folder.remove();
  });

  it("in the project, rotate-secret puts the new webhook secret into .env; mkt dev warns when .env's is stale", async () => {
    const folder = await tempDir();
    const env = { ...(await asDeveloper()), PATH: pathWith(SYSTEM_BIN) };
    const port = await freePort();
    const init = await runMkt(
      ['init', 'p', '--name', 'Rotor', '--template', 'python', '--port', String(port), '--json'],
      ctx.dir,
      { env, cwd: folder.path },
    );
    expect(init.code, init.stderr).toBe(0);
    const { app_id: app } = JSON.parse(init.stdout) as { app_id: string };
    const dir = join(folder.path, 'p');
    const before = await readFile(join(dir, '.env'), 'utf8');
    // In the project, no --app: its mkt.json names the app, and .env is updated.
    const rotated = await runMkt(['apps', 'rotate-secret', '--kind', 'webhook', '--yes'], ctx.dir, {
      env,
      cwd: dir,
    });
    expect(rotated.code, rotated.stderr).toBe(0);
    const secret = rotated.stdout.trim();
    const after = await readFile(join(dir, '.env'), 'utf8');
    expect(after).toContain(`MKT_WEBHOOK_SECRET=${secret}\n`);
    expect(after.replace(/^MKT_WEBHOOK_SECRET=.*$/m, '')).toBe(
      before.replace(/^MKT_WEBHOOK_SECRET=.*$/m, ''),
    );
    expect((await stat(join(dir, '.env'))).mode & 0o777).toBe(0o600);
    expect(rotated.stderr).toContain(`Updated it in ${join(dir, '.env')}`);
    // Rotated from elsewhere: .env is stale, and mkt dev says so.
    const elsewhere = await runMkt(
      ['apps', 'rotate-secret', '--kind', 'webhook', '--yes', '--app', app],
      ctx.dir,
      { env, cwd: folder.path },
    );
    expect(elsewhere.code, elsewhere.stderr).toBe(0);
    const dev = startMkt(['dev'], ctx.dir, { env, cwd: dir });
    await dev.waitForStderr(
      (s) => s.includes('MKT_WEBHOOK_SECRET is not the current webhook secret of'),
      20_000,
    );
    dev.child.kill('SIGINT');
    expect((await dev.exit()).code).toBe(130);
    await folder.remove();
  });
});
