// `mkt webhooks test` against the handlers people start from: both `mkt init` templates, started as
// generated, and the README's "Your webhook handler" example pass the whole battery; the battery's
// deliveries are the sandbox's own (headers, envelope, event schemas), with the app's stored secret.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ENVELOPES } from '../../src/sandbox/kernel/shapes.js';
import { MKT_BIN, runMkt, tempDir } from '../support/cli.js';
import { developerToken, useSandbox } from '../support/sandbox.js';
import { freePort, startServer } from '../support/server.js';
import { startHandler } from './handler-fixtures.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// Debian's Python, where python3-flask and python3-jwt are installed (a pyenv may come first on PATH).
const PYTHON_PATH = `/usr/bin:${process.env.PATH}`;
const hasFlask =
  spawnSync('python3', ['-c', 'import flask, jwt'], { env: { ...process.env, PATH: PYTHON_PATH } }).status ===
  0;

interface Report {
  ok: boolean;
  secret_source: string;
  app_id: string | null;
  cases: Array<{ id: string; verdict: string; got: string; fix: string | null }>;
}

const ctx = useSandbox();
const children: ChildProcess[] = [];
afterEach(() => {
  // Each app in a process group of its own: a reloader's or watcher's child goes with it.
  for (const c of children.splice(0)) {
    try {
      process.kill(-c.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
  }
});

/** Starts a handler process and resolves once its output says `ready`. */
function startApp(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, ready: string) {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  children.push(child);
  let output = '';
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready in 20 s:\n${output}`)), 20_000);
    const seen = (d: Buffer) => {
      output += d;
      if (output.includes(ready)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.on('exit', (code) => reject(new Error(`exited with ${code}:\n${output}`)));
  });
}

/** Expects every case passed, naming each failure with its fix. */
function expectAllPassed(r: { code: number | null; stdout: string; stderr: string }): Report {
  const report = JSON.parse(r.stdout) as Report;
  expect(
    report.cases.filter((c) => c.verdict !== 'pass').map((c) => `${c.id}: got ${c.got}; ${c.fix}`),
    r.stderr,
  ).toEqual([]);
  expect(r.code).toBe(0);
  return report;
}

/** The README and the guides in docs/ (sections move between them). */
function guides(): string[] {
  const docs = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));
  return [join(ROOT, 'README.md'), ...docs.map((f) => join(ROOT, 'docs', f))].map((f) =>
    readFileSync(f, 'utf8'),
  );
}

/** The first fenced block of `lang` in the section `title`, wherever the README's guides are. */
function guideBlock(title: string, lang: string): string {
  for (const text of guides()) {
    const section = text.split(/\n#+ /).find((s) => s.startsWith(`${title}\n`));
    const block = section && new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(section);
    if (block) return block[1]!;
  }
  throw new Error(`no ${lang} block in a section "${title}"`);
}

describe.each(['node', ...(hasFlask ? ['python'] : [])] as const)('the %s template', (template) => {
  it('passes the whole battery, started as mkt init made it', { timeout: 120_000 }, async () => {
    const work = await tempDir('mkt-whtest-');
    const port = await freePort();
    const token = await developerToken(ctx.sandbox, ['apps:write']);
    const env = { MKT_SITE_URL: ctx.sandbox.siteUrl, MKT_API_KEY: undefined, MKT_ACCESS_TOKEN: token };
    const init = await runMkt(
      [
        'init',
        'app',
        '--name',
        `Graded ${template}`,
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
    const { app_id: appId } = JSON.parse(init.stdout) as { app_id: string };
    const dir = join(work.path, 'app');
    if (template === 'node') {
      // The packages the template pins are this repository's own (same versions): no install needed.
      await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
      // The project's own start line (`start`, else `dev`): `node [flags] src/server…`.
      const { scripts } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      };
      const [, ...args] = (scripts.start ?? scripts.dev!).split(' ');
      await startApp(process.execPath, args, dir, process.env, `on http://localhost:${port}`);
    } else {
      await startApp(
        'python3',
        ['app.py'],
        dir,
        { ...process.env, PATH: PYTHON_PATH },
        `on http://localhost:${port}`,
      );
    }
    const r = await runMkt(
      ['webhooks', 'test', '--forward-to', `localhost:${port}/webhooks`, '--app', appId, '--json'],
      ctx.dir,
      { env },
    );
    const report = expectAllPassed(r);
    expect(report.app_id).toBe(appId);
    await work.remove();
  });
});

it('the README\'s "Your webhook handler" passes the whole battery', { timeout: 60_000 }, async () => {
  const port = await freePort();
  const file = join(ctx.dir, 'webhook-handler.mjs');
  await writeFile(file, guideBlock('Your webhook handler', 'js').replace('listen(3000', `listen(${port}`));
  const secret = ctx.sandbox.seed.app.webhook_secret;
  const child = spawn(process.execPath, [file], {
    env: { ...process.env, MKT_WEBHOOK_SECRET: secret },
    detached: true,
  });
  children.push(child);
  await expect
    .poll(() =>
      fetch(`http://127.0.0.1:${port}/`).then(
        () => true,
        () => false,
      ),
    )
    .toBe(true);
  const r = await runMkt(['webhooks', 'test', '--forward-to', `${port}/webhooks`, '--json'], ctx.dir, {
    env: { MKT_WEBHOOK_SECRET: secret },
  });
  expectAllPassed(r);
});

it(
  "grades the README's handler in one CI step: sandbox exec, the handler started, the test waiting for it",
  {
    timeout: 60_000,
  },
  async () => {
    const port = await freePort();
    const file = join(ctx.dir, 'webhook-handler.mjs');
    await writeFile(file, guideBlock('Your webhook handler', 'js').replace('listen(3000', `listen(${port}`));
    const bin = join(ctx.dir, 'bin');
    await mkdir(bin, { recursive: true });
    await writeFile(join(bin, 'mkt'), `#!/bin/sh\nexec "${process.execPath}" "${MKT_BIN}" "$@"\n`);
    await chmod(join(bin, 'mkt'), 0o755);
    // The README's line, with this test's port and paths: the handler gets the fresh sandbox's secret.
    const line = `"${process.execPath}" "${file}" & mkt webhooks test --forward-to ${port}/webhooks; r=$?; kill $!; exit $r`;
    expect(guides().join('\n')).toContain(
      "sh -c 'node webhook-handler.mjs & mkt webhooks test --forward-to 3000/webhooks; r=$?; kill $!; exit $r'",
    );
    const r = await runMkt(['sandbox', 'exec', '--', 'sh', '-c', line], ctx.dir, {
      env: { PATH: `${bin}:${process.env.PATH}`, MKT_DATA_DIR: join(ctx.dir, 'exec-data') },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('All 17 cases passed.');
    expect(r.stdout).toMatch(/^duplicate\t2xx\t204\t.*\tpass\t-$/m);
  },
);

it("sends what the sandbox sends: its headers, its envelope, its events' schemas, the app's secret", async () => {
  const { app } = ctx.sandbox.seed;
  const handler = await startHandler(app.webhook_secret);
  // The secret is read from the marketplace with the test key (nothing in the environment).
  const r = await ctx.mkt(['webhooks', 'test', '--forward-to', String(handler.port), '--json']);
  const report = expectAllPassed(r);
  expect(report).toMatchObject({ secret_source: 'marketplace', app_id: app.id });
  const valid = handler.accepted.slice(0, 4);
  for (const e of valid)
    expect(() => ENVELOPES[e.event as keyof typeof ENVELOPES].parse(e), e.event).not.toThrow();
  expect(valid[0]!.data.app_id).toBe(app.id);

  // One real delivery of the sandbox, and one of the battery, as a server sees them.
  const seen = await startServer((_req, res) => void res.writeHead(204).end());
  try {
    const set = await ctx.mkt(['apps', 'update', app.id, '--webhook-url', seen.url]);
    expect(set.code, set.stderr).toBe(0);
    expect((await ctx.mkt(['trigger', 'subscription.created'])).code).toBe(0);
    await seen.waitFor(1);
    const secretEnv = { MKT_WEBHOOK_SECRET: app.webhook_secret };
    await ctx.mkt(['webhooks', 'test', '--forward-to', String(seen.port)], secretEnv);
    const [real, test] = [seen.seen[0]!, seen.seen[2]!];
    const names = (h: Record<string, unknown>) =>
      Object.keys(h)
        .filter((n) => !['host', 'connection', 'x-mkt-forwarded-by'].includes(n))
        .sort();
    expect(names(test.headers)).toEqual(names(real.headers));
    expect(test.headers['user-agent']).toBe(real.headers['user-agent']);
    expect(Object.keys(JSON.parse(test.body))).toEqual(Object.keys(JSON.parse(real.body)));
    expect(test.headers['x-marketplace-delivery']).toMatch(/^dlv_[0-9a-f]{24}$/);
    expect(real.headers['x-marketplace-delivery']).toMatch(/^dlv_[0-9a-f]{24}$/);
  } finally {
    await seen.close();
    await ctx.mkt(['apps', 'update', app.id, '--webhook-url', '']);
  }
});
