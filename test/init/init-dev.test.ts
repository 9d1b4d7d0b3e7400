// `mkt init` then `mkt dev`, as a new developer runs them: from an empty folder to an app that signs
// a user in through the sandbox's consent page (in Chromium), refuses then allows its paid feature
// as the plan changes, verifies a triggered webhook with its own check, and renders its embedded
// page; for the Node (TypeScript, Hono) and the Python (Flask) templates.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docPath, readmeCommands } from '../readme/readme-commands.js';
import { hasChromium, launchChromium } from '../support/chromium.js';
import { npmGlobalConfig, runMkt, startMkt, tempDir } from '../support/cli.js';
import { developerToken, useSandbox } from '../support/sandbox.js';
import { freePort } from '../support/server.js';

// Debian's Python, where python3-flask and python3-jwt are installed (a pyenv may come first on PATH).
const PYTHON_PATH = `/usr/bin:${process.env.PATH}`;
const hasFlask =
  spawnSync('python3', ['-c', 'import flask, jwt'], { env: { ...process.env, PATH: PYTHON_PATH } }).status ===
  0;

/** Runs a command without blocking this process (the sandbox answers from it). */
function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }) {
  return new Promise<{ status: number | null; output: string }>((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, output }));
  });
}

describe('mkt init', () => {
  const ctx = useSandbox({ dirPerTest: true });

  it('refuses without a terminal in one sentence naming the flags it needs (exit 2)', async () => {
    const folder = await tempDir();
    const r = await runMkt(['init'], ctx.dir, { env: ctx.env, cwd: folder.path });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'mkt init needs --name NAME and --template node|python when it cannot ask (no terminal).',
    );
    await folder.remove();
  });

  it('refuses a folder that is not empty, before anything is registered', async () => {
    const folder = await tempDir();
    const token = await developerToken(ctx.sandbox, ['apps:write']);
    const r = await runMkt(['init', '.', '--name', 'X', '--template', 'node'], ctx.dir, {
      env: { MKT_SITE_URL: ctx.sandbox.siteUrl, MKT_ACCESS_TOKEN: token },
      cwd: join(ctx.dir, '..'),
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is not empty; give mkt init a new or empty folder/);
    const apps = await ctx.mkt(['apps', 'list', '--json'], {
      MKT_API_KEY: undefined,
      MKT_ACCESS_TOKEN: token,
    });
    expect(JSON.parse(apps.stdout).map((a: { name: string }) => a.name)).not.toContain('X');
    await folder.remove();
  });
});

describe('mkt dev', () => {
  const ctx = useSandbox();

  it('starts the app again with a backoff when it exits, and Ctrl-C stops what it started', async () => {
    const folder = await tempDir();
    const port = await freePort();
    const dev = startMkt(['dev', '--command', 'echo "up $PORT"; exit 3', '--port', String(port)], ctx.dir, {
      env: ctx.env,
      cwd: folder.path,
    });
    await dev.waitFor(() => dev.stdout().includes('starting it again in 2 s.'), 15_000);
    expect(dev.stdout()).toContain(`app      | up ${port}`);
    expect(dev.stdout()).toContain('app      | exited with code 3; starting it again in 1 s.');
    expect(dev.stdout()).toContain('app      | exited with code 3; starting it again in 2 s.');
    // mkt's own credential never reaches the app's environment.
    const env = startMkt(
      ['dev', '--command', `echo "key=\${MKT_API_KEY:-none}"; sleep 30.${port}`, '--port', String(port)],
      ctx.dir,
      {
        env: ctx.env,
        cwd: folder.path,
      },
    );
    await env.waitFor(() => /app +\| key=/.test(env.stdout()), 15_000);
    expect(env.stdout()).toContain('app      | key=none');
    for (const d of [dev, env]) d.child.kill('SIGINT');
    expect((await dev.exit()).code).toBe(130);
    expect((await env.exit()).code).toBe(130);
    // The app's `sleep` (this run's own, by its port) was stopped with mkt dev: its process group is
    // gone once the reaping of what was killed settles (well within the sleep's 30 s).
    await expect
      .poll(() => spawnSync('pgrep', ['-f', `sleep 30.${port}`]).stdout.toString(), { timeout: 5_000 })
      .toBe('');
    await folder.remove();
  });

  it('outside a project and without --command it says how to make one (exit 2)', async () => {
    const folder = await tempDir();
    const r = await runMkt(['dev'], ctx.dir, { env: ctx.env, cwd: folder.path });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /No mkt\.json in .* and no --command: mkt dev runs a project made by mkt init\./,
    );
    await folder.remove();
  });
});

describe.skipIf(!hasChromium())('mkt init, then mkt dev (Chromium)', () => {
  const ctx = useSandbox();
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  const walk = async (template: 'node' | 'python') => {
    const work = await tempDir('mkt-init-');
    const port = await freePort();
    const token = await developerToken(ctx.sandbox, ['apps:write', 'identity:read']);
    // As the developer signed in with apps:write (the token stands for `mkt login --scope apps:write`).
    const env = {
      MKT_SITE_URL: ctx.sandbox.siteUrl,
      MKT_API_KEY: undefined,
      MKT_ACCESS_TOKEN: token,
      ...(template === 'python' ? { PATH: PYTHON_PATH } : {}),
    };
    const mkt = (args: string[], cwd = work.path) => runMkt(args, ctx.dir, { env, cwd });

    // The guide's own lines (docs/new-app.md), with a free port and this walk's template.
    const readme = readmeCommands(docPath('docs/new-app.md'), 'Start a new app');
    expect(readme).toEqual(
      expect.arrayContaining([
        'mkt init my-app --name "My App" --template node',
        'cd my-app && npm install',
        'mkt dev',
      ]),
    );
    const init = await mkt([
      'init',
      'my-app',
      '--name',
      `Acme ${template}`,
      '--template',
      template,
      '--port',
      String(port),
      '--json',
    ]);
    expect(init.code, init.stderr).toBe(0);
    const made = JSON.parse(init.stdout) as {
      app_id: string;
      test_user_id: string;
      dir: string;
      files: string[];
    };
    const dir = join(work.path, 'my-app');
    expect(made.dir).toBe(dir);
    const dotenv = readFileSync(join(dir, '.env'), 'utf8');
    expect(statSync(join(dir, '.env')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, '.gitignore'), 'utf8').split('\n')).toContain('.env');
    expect(dotenv).toMatch(/^MKT_CLIENT_SECRET=cs_/m);
    expect(dotenv).toMatch(/^MKT_WEBHOOK_SECRET=whsec_/m);
    // The secrets are in .env alone: no other file of the project holds them.
    const secret = /^MKT_CLIENT_SECRET=(.*)$/m.exec(dotenv)![1]!;
    for (const file of made.files.filter((f) => f !== '.env'))
      expect(readFileSync(join(dir, file), 'utf8'), file).not.toContain(secret);

    if (template === 'node') {
      const install = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], {
        cwd: dir,
        env: { ...process.env, npm_config_globalconfig: npmGlobalConfig() },
      });
      expect(install.status, install.output).toBe(0);
    }
    // The project's own tests, against the sandbox named in its .env.
    const own =
      template === 'node'
        ? await run('npm', ['test'], { cwd: dir })
        : await run('python3', ['-m', 'unittest'], { cwd: dir, env: { ...process.env, PATH: PYTHON_PATH } });
    expect(own.status, own.output).toBe(0);

    const dev = startMkt(['dev'], ctx.dir, { env, cwd: dir });
    try {
      await dev.waitFor(() => dev.stdout().includes(`on http://localhost:${port}`), 20_000);
      await dev.waitFor(() => /webhooks \| .*Ready/i.test(dev.stdout()), 20_000);
      const tab = await browser.newPage();
      const app = `http://localhost:${port}`;

      // Sign-in through the consent page, as the test user init created.
      await tab.goto(app);
      await tab.getByRole('link', { name: 'Sign in with the marketplace' }).click();
      await tab.locator('select[name="user_id"]').selectOption(made.test_user_id);
      await tab.getByRole('button', { name: 'Approve' }).click();
      await expect
        .poll(async () => `${tab.url()} ${await tab.locator('body').textContent()}`)
        .toContain('Signed in as Test User');

      // The paid feature: refused on the free plan, allowed once the user is on a plan with it.
      expect((await tab.goto(`${app}/reports`))!.status()).toBe(402);
      await linkPayouts(mkt, made.app_id);
      const plan = await mkt([
        'plans',
        'create',
        '--app',
        made.app_id,
        '--name',
        'Pro',
        '--kind',
        'monthly',
        '--price',
        '9.99',
        '--currency',
        'USD',
        '--feature',
        'pro',
      ]);
      expect(plan.code, plan.stderr).toBe(0);
      // The plan changes by a triggered subscription.created, which reaches the app through
      // `webhooks listen` and passes the app's own signature check.
      const trigger = await mkt([
        'trigger',
        'subscription.created',
        '--app',
        made.app_id,
        '--user',
        made.test_user_id,
        '--plan',
        'pro',
      ]);
      expect(trigger.code, trigger.stderr).toBe(0);
      await dev.waitFor(() => /app +\| webhook verified: subscription\.created/.test(dev.stdout()), 20_000);
      expect((await tab.goto(`${app}/reports`))!.status()).toBe(200);
      expect(await tab.locator('main').textContent()).toContain('Here are your reports, Test User');

      expect(dev.stdout()).not.toMatch(/webhook refused/);

      // The embedded page, framed by the dashboard with a context token it verifies.
      const preview = await mkt([
        'apps',
        'preview',
        '--app',
        made.app_id,
        '--user',
        made.test_user_id,
        '--json',
      ]);
      expect(preview.code, preview.stderr).toBe(0);
      await tab.goto(JSON.parse(preview.stdout).url);
      const frame = tab.frameLocator('iframe');
      await expect
        .poll(() => frame.locator('main').textContent())
        .toContain(`Embedded for ${made.test_user_id}`);
      await tab.close();
    } finally {
      dev.child.kill('SIGINT');
    }
    const exit = await dev.exit();
    expect(exit.code).toBe(130);
    // Everything mkt dev started has stopped; the sandbox it did not start still answers.
    await expect(fetch(`http://localhost:${port}/`)).rejects.toThrow();
    expect((await fetch(`${ctx.sandbox.siteUrl}/.well-known/oauth-authorization-server`)).status).toBe(200);
    await work.remove();
  };

  it('node: sign-in, entitlement, webhook and embedded page work at once', { timeout: 180_000 }, () =>
    walk('node'),
  );
  it.skipIf(!hasFlask)('python: the same with Flask', { timeout: 120_000 }, () => walk('python'));
});

/** `mkt apps payments link`, then Approve on the processor's page, as the developer would. */
async function linkPayouts(mkt: (args: string[]) => ReturnType<typeof runMkt>, appId: string): Promise<void> {
  const link = await mkt(['apps', 'payments', 'link', '--app', appId, '--json']);
  expect(link.code, link.stderr).toBe(0);
  const { url } = JSON.parse(link.stdout) as { url: string };
  const page = await (await fetch(url)).text();
  const form = new URLSearchParams({ decision: 'approve' });
  for (const m of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g))
    form.set(m[1]!, m[2]!);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(url).origin },
    body: form,
  });
  expect(res.status, await res.text()).toBe(200);
}
