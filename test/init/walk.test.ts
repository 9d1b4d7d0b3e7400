// `mkt init` then `mkt dev`, as a new developer runs them, for both templates: from an empty folder,
// the generated README's install line, `mkt dev`, sign-in in Chromium as the test user, an edit that
// reloads the app (the session kept), a triggered event (no --app: the project's mkt.json) verified
// by the app, then six simulated minutes later (faketime) the backlog of an event sent while mkt dev
// was down and a resend, both accepted by the app's 5-minute tolerance (restamped), and the project's own tests under `mkt sandbox exec --seed mkt.fixtures.json` from a
// fresh copy without .env. The Node app is walked on Node 20 (the oldest it supports; its tests then
// on 20, 22 and 24), and again whole on 24.
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium } from '../support/chromium.js';
import { npmGlobalConfig, runMkt, startMkt, tempDir } from '../support/cli.js';
import { developerToken, useSandbox } from '../support/sandbox.js';
import { freePort } from '../support/server.js';
import { FAKETIME_LIB, hasFlask, nodeBin, pathWith, run, SYSTEM_BIN } from './helpers.js';

describe.skipIf(!hasChromium())('mkt init, then mkt dev (Chromium)', () => {
  const ctx = useSandbox();
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  const walk = async (template: 'node' | 'python', node: 20 | 24 = 20) => {
    const work = await tempDir('mkt-init-');
    const port = await freePort();
    const token = await developerToken(ctx.sandbox, ['apps:write', 'identity:read']);
    // The app's own runtime first on PATH: Node 20 (the system's) or 24; Debian's Python.
    const PATH = pathWith(template === 'node' ? nodeBin(node) : SYSTEM_BIN);
    // As the developer signed in with apps:write (the token stands for `mkt login --scope apps:write`).
    const env = { MKT_SITE_URL: ctx.sandbox.siteUrl, MKT_API_KEY: undefined, MKT_ACCESS_TOKEN: token, PATH };
    const dir = join(work.path, 'my-app');
    const mkt = (args: string[], extra: Record<string, string> = {}) =>
      runMkt(args, ctx.dir, { env: { ...env, ...extra }, cwd: dir });

    const started = Date.now();
    const init = await runMkt(
      [
        'init',
        'my-app',
        '--name',
        `Acme ${template}`,
        '--template',
        template,
        '--port',
        String(port),
        '--json',
      ],
      ctx.dir,
      { env, cwd: work.path },
    );
    expect(init.code, init.stderr).toBe(0);
    const made = JSON.parse(init.stdout) as { app_id: string; test_user_id: string; files: string[] };
    expect(made.files).toEqual(
      expect.arrayContaining(['.env', 'mkt.json', 'mkt.fixtures.json', 'README.md']),
    );

    // The generated README's install line, as written.
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    const install = /```sh\n(.*)\n/.exec(readme)![1]!;
    expect(install).toBe(
      template === 'node'
        ? 'npm install'
        : 'python3 -m venv --system-site-packages .venv && .venv/bin/pip install -r requirements.txt',
    );
    const installed = await run('sh', ['-c', install], {
      cwd: dir,
      env: {
        ...process.env,
        PATH,
        npm_config_globalconfig: npmGlobalConfig(),
        npm_config_prefer_offline: 'true',
        npm_config_audit: 'false',
        npm_config_fund: 'false',
      },
    });
    expect(installed.status, installed.output).toBe(0);

    const dev = startMkt(['dev'], ctx.dir, { env, cwd: dir });
    const app = `http://localhost:${port}`;
    const tab = await browser.newPage();
    let deliveryId: string;
    try {
      await dev.waitForStderr((s) => s.includes(`App:      ${app}`), 30_000);
      await dev.waitFor(() => /webhooks \| .*Ready/i.test(dev.stdout()), 20_000);
      // Sign-in through the consent page, as the test user init created.
      let callback = '';
      tab.on('request', (r) => {
        if (r.url().includes('/callback?')) callback = r.url();
      });
      await tab.goto(app);
      await tab.getByRole('link', { name: 'Sign in with the marketplace' }).click();
      await tab.locator('select[name="user_id"]').selectOption(made.test_user_id);
      await tab.getByRole('button', { name: 'Approve' }).click();
      await expect
        .poll(async () => `${tab.url()} ${await tab.locator('body').textContent()}`)
        .toContain('Signed in as Test User');
      // The callback again with its code, spent (a reload, the back button): a page that says so, 4xx.
      const state = new URL(callback).searchParams.get('state')!;
      if (template === 'node')
        await tab
          .context()
          .addCookies([{ name: 'signin', value: `${state}.verifier`, url: `${app}/callback` }]);
      const spent = await tab.goto(callback);
      expect(spent!.status()).toBe(400);
      expect(await tab.locator('main').textContent()).toMatch(
        /refused this sign-in|expired or came from elsewhere/,
      );
      await tab.goto(app);
      console.log(
        `[${template}] mkt init to a signed-in user: ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );

      // An edit reloads the app; the session outlives the restart (SESSION_SECRET in .env).
      const source = join(dir, template === 'node' ? 'src/server.js' : 'app.py');
      const edited = Date.now();
      writeFileSync(source, readFileSync(source, 'utf8').replace('Signed in as', 'Welcome back,'));
      // What mkt dev printed goes with a failure: the reloader's own lines say where the time went.
      await expect
        .poll(async () => ((await tab.reload())?.ok() ? await tab.locator('main').textContent() : ''), {
          timeout: 30_000,
        })
        .toContain('Welcome back, Test User')
        .catch((err: Error) => {
          throw new Error(`${err.message}\n--- mkt dev:\n${dev.stdout().slice(-4000)}${dev.stderr()}`);
        });
      console.log(
        `[${template}] edit to the reloaded app answering: ${((Date.now() - edited) / 1000).toFixed(1)} s`,
      );

      // An event on the app's free plan, with no --app: the project's mkt.json names it.
      const trigger = await mkt(['trigger', 'subscription.created', '--json']);
      expect(trigger.code, trigger.stderr).toBe(0);
      deliveryId = (JSON.parse(trigger.stdout) as { delivery_id: string }).delivery_id;
      await dev.waitFor(() => /app +\| webhook verified: subscription\.created/.test(dev.stdout()), 20_000);
      expect(dev.stdout()).not.toMatch(/webhook refused/);
    } finally {
      await tab.close();
      dev.child.kill('SIGINT');
    }
    expect((await dev.exit()).code).toBe(130);
    await expect(fetch(`${app}/`)).rejects.toThrow();

    // Six minutes later (faketime for mkt dev, its app and the resend): the journal's delivery is
    // past the app's 5-minute tolerance; the resend carries a fresh timestamp and signature.
    // An event while mkt dev is down: the backlog that arrives on its restart, six minutes on.
    const whileDown = await mkt(['trigger', 'subscription.created', '--json']);
    expect(whileDown.code, whileDown.stderr).toBe(0);
    const verified = () =>
      dev2.stdout().match(/app +\| webhook verified: subscription\.created/g)?.length ?? 0;
    const later = { LD_PRELOAD: FAKETIME_LIB, FAKETIME: '+6m', FAKETIME_DONT_RESET: '1' };
    const dev2 = startMkt(['dev'], ctx.dir, { env: { ...env, ...later }, cwd: dir });
    try {
      await dev2.waitForStderr((s) => s.includes(`App:      ${app}`), 30_000);
      await dev2.waitFor(() => verified() === 1, 15_000);
      const resend = await mkt(['webhooks', 'resend', deliveryId, '--json'], later);
      expect(resend.code, resend.stderr + resend.stdout).toBe(0);
      expect(JSON.parse(resend.stdout)).toMatchObject({ id: deliveryId, ok: true, response_status: 204 });
      await dev2.waitFor(() => verified() === 2, 10_000);
      expect(dev2.stdout()).not.toMatch(/webhook refused/);
    } finally {
      dev2.child.kill('SIGINT');
    }
    expect((await dev2.exit()).code).toBe(130);

    // The project's own tests, as its README's CI section runs them, in a fresh copy (no .env).
    const fresh = join(work.path, 'fresh');
    cpSync(dir, fresh, { recursive: true });
    rmSync(join(fresh, '.env'));
    // The Node 20 walk runs the tests on each Node; the Node 24 walk on 24.
    const versions = template === 'python' ? [0] : node === 20 ? [20, 22, 24] : [node];
    for (const version of versions) {
      const test = template === 'node' ? ['npm', 'test'] : ['python3', '-m', 'unittest'];
      const exec = await runMkt(['sandbox', 'exec', '--seed', 'mkt.fixtures.json', '--', ...test], ctx.dir, {
        env: {
          MKT_SITE_URL: undefined,
          MKT_ACCESS_TOKEN: undefined,
          PATH: version ? pathWith(nodeBin(version)) : PATH,
        },
        cwd: fresh,
      });
      expect(exec.code, `Node ${version}: ${exec.stdout}${exec.stderr}`).toBe(0);
    }
    await work.remove();
  };

  it(
    'node: init, install, dev, sign-in, reload, trigger, a late resend, CI tests',
    { timeout: 240_000 },
    () => walk('node'),
  );
  // Node 22 runs the project's tests in the Node 20 walk, and mkt itself: the newest is walked whole.
  it('node on Node 24: the same walk, the app on that Node', { timeout: 240_000 }, () => walk('node', 24));
  it.skipIf(!hasFlask)('python: the same with Flask', { timeout: 180_000 }, () => walk('python'));
});
