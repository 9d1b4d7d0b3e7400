#!/usr/bin/env node
// The newcomer's path, end to end against the built-in sandbox, with no person needed: start the
// sandbox, sign in through the real loopback OAuth flow, whoami, entitlements, create an app, make
// it the default, give it a plan and a webhook secret, then trigger an event for it and watch it
// arrive, verified, at a local server through `mkt webhooks listen`. Everything runs in a temporary folder; nothing of yours is touched.
import { spawn } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../bin/run.js', import.meta.url));
const person = fileURLToPath(new URL('./approve-consent.js', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'mkt-demo-'));
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MKT_')));
Object.assign(env, {
  MKT_CONFIG_DIR: join(work, 'config'),
  MKT_DATA_DIR: join(work, 'data'),
  MKT_CREDENTIAL_STORE: 'file', // a demo leaves nothing in your keychain
});
const running = [];
const bold = (s) => (process.stdout.isTTY && !process.env.NO_COLOR ? `\u001b[1m${s}\u001b[0m` : s);
let stepNo = 0;

function step(title, shown) {
  stepNo += 1;
  console.log(`\n${bold(`${stepNo}. ${title}`)}\n$ ${shown}`);
}

/** Runs mkt to completion, showing its output indented; fails the demo on a non-zero exit. */
function mkt(args, extraEnv = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env: { ...env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      stdout += d;
      process.stdout.write(d.replace(/^(?=.)/gm, '  '));
    });
    child.stderr.setEncoding('utf8').on('data', (d) => process.stdout.write(d.replace(/^(?=.)/gm, '  ')));
    child.on('close', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`mkt ${args[0]} exited ${code}`)),
    );
  });
}

/** Starts a long-running mkt and resolves once `ready(output)` says so. */
function background(args, ready, { echo = true } = {}) {
  const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(child);
  let output = '';
  const waiters = new Set();
  /** Resolves once the output contains `text`. */
  const waitFor = (text) =>
    new Promise((resolve) => {
      const check = () => output.includes(text) && (waiters.delete(check), resolve());
      waiters.add(check);
      check();
    });
  return new Promise((resolve, reject) => {
    const onData = (d) => {
      output += d;
      if (echo) process.stdout.write(d.replace(/^(?=.)/gm, '  │ '));
      for (const check of [...waiters]) check();
      const result = ready(output);
      if (result) resolve({ child, result, waitFor });
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);
    child.on('close', (code) => reject(new Error(`mkt ${args.join(' ')} exited ${code}:\n${output}`)));
  });
}

/** The person's "Approve" on one of the sandbox's pages, played by scripts/approve-consent.js. */
function approve(url) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [person, url], { env, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`approving ${url} failed`))));
  });
}

/** A stand-in for the developer's own webhook handler: checks each signature itself. */
function webhookServer(secret) {
  const received = [];
  let notify;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const expected = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
      const given = String(req.headers['x-marketplace-signature'] ?? '');
      const valid =
        given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
      received.push({ body: JSON.parse(body.toString()), id: req.headers['x-marketplace-delivery'], valid });
      res.writeHead(valid ? 200 : 400).end();
      notify?.();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}/webhooks`,
        received,
        close: () => server.close(),
        /** Resolves with the first delivery of `event`. */
        next: (event) =>
          new Promise((resolve) => {
            const check = () => {
              const hit = received.find((d) => d.body.event === event);
              if (hit) resolve(hit);
            };
            notify = check;
            check();
          }),
      }),
    ),
  );
}

async function main() {
  console.log(bold('mkt demo: the whole developer loop against the built-in sandbox'));
  console.log(`(working in ${work})`);

  step('Start the local marketplace', 'mkt sandbox start --port 0');
  const { result: seed } = await background(
    ['sandbox', 'start', '--port', '0', '--json', '--quiet'],
    (out) => {
      try {
        return JSON.parse(out);
      } catch {
        return undefined;
      }
    },
    { echo: false },
  );
  console.log(`  Site URL:  ${seed.site_url}`);
  console.log(`  App:       ${seed.app.name} (${seed.app.id}), client id ${seed.app.client_id}`);
  console.log(
    `  Test key:  ${seed.test_key.slice(0, 9)}…   Users: ${seed.users.map((u) => u.email).join(', ')}`,
  );

  step('Point mkt at it', `mkt config set site-url ${seed.site_url}`);
  await mkt(['config', 'set', 'site-url', seed.site_url]);

  step(
    'Sign in with OAuth (PKCE, loopback redirect); a script plays you at the consent page',
    `MKT_CLIENT_SECRET=… mkt login --client-id ${seed.app.client_id} --scope identity:read --scope entitlements:read --scope apps:write`,
  );
  await mkt(
    [
      'login',
      '--client-id',
      seed.app.client_id,
      '--scope',
      'identity:read',
      '--scope',
      'entitlements:read',
      '--scope',
      'apps:write',
    ],
    {
      MKT_CLIENT_SECRET: seed.app.client_secret,
      MKT_BROWSER: `"${process.execPath}" "${person}"`,
      APPROVE_AS: seed.developer.id,
    },
  );

  step('Who am I?', 'mkt whoami');
  await mkt(['whoami']);

  step('What am I entitled to? (what scripts call)', 'mkt entitlements --json');
  await mkt(['entitlements', '--json']);

  // From here on, the app the demo creates: its plan, its webhooks, its test user.
  step(
    'Create an app (--jq: print its id alone)',
    'mkt apps create --name "Demo Storefront" --redirect-uri http://127.0.0.1/callback --jq .id',
  );
  const appId = (
    await mkt([
      'apps',
      'create',
      '--name',
      'Demo Storefront',
      '--redirect-uri',
      'http://127.0.0.1/callback',
      '--jq',
      '.id',
    ])
  ).trim();

  step('Make it the default app of the commands that follow', `mkt apps use ${appId}`);
  await mkt(['apps', 'use', appId]);

  step(
    "Link its payment account, so that it can sell paid plans (the script plays you at the processor's page)",
    'mkt apps payments link',
  );
  const connect = (await mkt(['apps', 'payments', 'link'])).trim();
  await approve(connect);
  await mkt(['apps', 'payments', 'status']);

  step(
    'Add a pricing plan',
    'mkt plans create --name "Pro Annual" --kind annual --price 99.00 --currency USD --feature export',
  );
  await mkt([
    'plans',
    'create',
    '--name',
    'Pro Annual',
    '--kind',
    'annual',
    '--price',
    '99.00',
    '--currency',
    'USD',
    '--feature',
    'export',
  ]);

  step(
    "Get the app's webhook signing secret (your handler checks signatures with it)",
    'mkt apps rotate-secret --kind webhook --yes --jq .webhook_secret',
  );
  const secret = (
    await mkt(['apps', 'rotate-secret', '--kind', 'webhook', '--yes', '--jq', '.webhook_secret'])
  ).trim();

  const target = await webhookServer(secret);
  step(
    'Receive webhooks on this machine (your server stands at ' + target.url + ')',
    `mkt webhooks listen --forward-to ${target.url}`,
  );
  const listen = await background(['webhooks', 'listen', '--forward-to', target.url], (out) =>
    out.includes('Ready.'),
  );

  // The simulator enacts what it sends: a new test user of the app subscribes to its plan.
  step('Make an event happen', 'mkt trigger subscription.created --plan pro-annual');
  await mkt(['trigger', 'subscription.created', '--plan', 'pro-annual']);
  const timeout = setTimeout(() => {
    console.error('\nThe event did not reach the local server within 15 s.');
    process.exit(1);
  }, 15_000);
  const got = await target.next('subscription.created');
  await listen.waitFor(`${got.id}  relay`); // listen's own line for it, printed once journaled
  clearTimeout(timeout);
  if (!got.valid) throw new Error('The forwarded delivery did not verify at the local server.');
  console.log(
    `\n${bold('✓')} Your server received ${got.body.event} (${got.id}) for ${got.body.data.user_id}; its own signature check passed.`,
  );
  target.close();

  console.log();
}

/** Stops the background commands newest first (listen before the sandbox it listens to). */
async function stopAll() {
  for (const child of running.reverse()) {
    if (child.exitCode !== null) continue;
    child.removeAllListeners('close');
    const closed = new Promise((resolve) => child.on('close', resolve));
    child.kill('SIGINT');
    await closed;
  }
  rmSync(work, { recursive: true, force: true });
}

main()
  .then(stopAll)
  .then(() =>
    console.log(
      `\n${bold('Done.')} Every step above is a command you can run yourself: start with \`mkt sandbox start\`.`,
    ),
  )
  .catch(async (err) => {
    console.error(`\nThe demo stopped: ${err.message}`);
    await stopAll();
    process.exit(1);
  });
