#!/usr/bin/env node
// The time from `mkt init` to a signed-in user in the generated app, per template: init (registers
// the app, writes the project), the install docs/new-app.md gives (node: npm install from the npm cache),
// `mkt dev` until the app answers, then a sign-in as a person would do it (the app's /login, the
// sandbox's consent page, Approve, the app's callback) until the app's page names the user.
// Each template ROUNDS times (default 3), interleaved; the median of each, and its phases.
//   npm run build && node bench/init.js
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { developerToken } from './developer-token.js';

const bin = fileURLToPath(new URL('../bin/run.js', import.meta.url));
const rounds = Number(process.env.ROUNDS ?? 3);
const work = mkdtempSync(join(tmpdir(), 'mkt-bench-init-'));
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MKT_')));
Object.assign(env, { MKT_CONFIG_DIR: join(work, 'config'), MKT_CREDENTIAL_STORE: 'file', HOME: work });
const children = [];
const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));

function start(command, args, options = {}) {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], ...options });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const done = new Promise((resolve) => child.on('close', (code) => resolve({ code, out })));
  return { child, done, output: () => out };
}
async function run(command, args, options) {
  const r = await start(command, args, options).done;
  if (r.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${r.code}\n${r.out}`);
  return r.out;
}
const until = async (check) => {
  for (;;) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 25));
  }
};

// The sandbox, and the developer's token (the consent page, Approve as the developer).
const sandbox = start(process.execPath, [
  bin,
  'sandbox',
  'start',
  '--port',
  '0',
  '--data-dir',
  join(work, 'sb'),
  '--json',
  '--quiet',
]);
await until(async () => sandbox.output().includes('"site_url"'));
await new Promise((r) => setTimeout(r, 200));
const seed = JSON.parse(sandbox.output().slice(sandbox.output().indexOf('{')));
env.MKT_SITE_URL = seed.site_url;
env.MKT_ACCESS_TOKEN = await developerToken(new URL(seed.site_url).port, seed, 'apps:write identity:read');

/** Follows the app's sign-in as a browser would, keeping cookies; answers the final page. */
async function signIn(appUrl, userId) {
  const jar = new Map();
  const go = async (url, init = {}) => {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { redirect: 'manual', ...init, headers: { ...init.headers, cookie } });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const [k, v] = pair.split('=');
      if (new URL(url).origin === appUrl) jar.set(k, v);
    }
    return res;
  };
  const authorize = (await go(`${appUrl}/login`)).headers.get('location');
  const page = await (await fetch(authorize)).text();
  const form = new URLSearchParams({ user_id: userId, decision: 'approve' });
  for (const m of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g))
    form.set(m[1], m[2]);
  const consent = await fetch(new URL('/oauth/authorize', authorize), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(authorize).origin },
    body: form,
    redirect: 'manual',
  });
  await go(consent.headers.get('location'));
  return (await go(`${appUrl}/`)).text();
}

async function once(template, i) {
  const dir = join(work, `${template}-${i}`);
  const port = await freePort();
  const t0 = performance.now();
  const made = JSON.parse(
    await run(process.execPath, [
      bin,
      'init',
      dir,
      '--name',
      `Bench ${template} ${i}`,
      '--template',
      template,
      '--port',
      String(port),
      '--json',
    ]),
  );
  const t1 = performance.now();
  // The README's install line, with the system's Node 20 and Debian's Python first on PATH.
  const PATH = ['/usr/bin', ...env.PATH.split(':').filter((d) => !d.includes('node_modules'))].join(':');
  if (template === 'node')
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], {
      cwd: dir,
      env: { ...env, PATH },
    });
  else
    await run(
      'sh',
      ['-c', 'python3 -m venv --system-site-packages .venv && .venv/bin/pip install -r requirements.txt'],
      {
        cwd: dir,
        env: { ...env, PATH },
      },
    );
  const t2 = performance.now();
  const dev = start(process.execPath, [bin, 'dev'], { cwd: dir, env: { ...env, PATH } });
  const appUrl = `http://localhost:${port}`;
  await until(async () => (await fetch(appUrl)).ok);
  const t3 = performance.now();
  const home = await signIn(appUrl, made.test_user_id);
  if (!home.includes('Signed in as <strong>Test User</strong>')) throw new Error(`not signed in: ${home}`);
  const t4 = performance.now();
  dev.child.kill('SIGINT');
  await dev.done;
  return { total: t4 - t0, init: t1 - t0, install: t2 - t1, dev: t3 - t2, signIn: t4 - t3 };
}

const results = { node: [], python: [] };
for (let i = 0; i < rounds; i += 1) for (const t of Object.keys(results)) results[t].push(await once(t, i));
const median = (xs) => xs.toSorted((a, b) => a - b)[Math.floor(xs.length / 2)];
const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
console.log(
  `mkt init → signed-in user, median of ${rounds} (load average ${(await import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')})`,
);
console.log('template | total | init | install | dev until the app answers | sign-in');
for (const [t, rs] of Object.entries(results)) {
  const m = (k) => s(median(rs.map((r) => r[k])));
  console.log(`${t} | ${m('total')} | ${m('init')} | ${m('install')} | ${m('dev')} | ${m('signIn')}`);
}
sandbox.child.kill('SIGTERM');
await sandbox.done;
rmSync(work, { recursive: true, force: true });
