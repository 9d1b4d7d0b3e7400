import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startMkt } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';
import { startServer } from '../support/server.js';

// The first hour, round 4 (issue 53), walked as a new user types it: `-h` for help and `--jq` before
// the command; a refusal for want of a sign-in that says so and gives the line that works, and that
// line, run; a second sandbox on a folder one already uses; a resend that the handler refuses; and
// `sandbox exec` ending with its command's exit code through mkt's one error path.

const ctx = useSandbox();
const seed = () => ctx.sandbox.seed;
const PERSON = fileURLToPath(new URL('../../scripts/approve-consent.js', import.meta.url));
/** No credential at all: not the fixture's API key. */
const nobody = { MKT_API_KEY: undefined };

describe('-h is help everywhere, and every global flag may lead', () => {
  it('mkt -h, mkt whoami -h and mkt -h whoami print the help screens, kept ones too', async () => {
    const cache = join(ctx.dir, 'help-cache');
    const root = await ctx.mkt(['-h'], { MKT_CACHE_DIR: cache });
    expect(root.code, root.stderr).toBe(0);
    expect(root.stdout).toMatch(/^START HERE/);
    expect(root.stdout).toEqual((await ctx.mkt(['--help'])).stdout);
    const whoami = await ctx.mkt(['whoami', '-h'], { MKT_CACHE_DIR: cache });
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(whoami.stdout).toMatch(/^Show the profile of the signed-in user/);
    expect(await ctx.mkt(['-h', 'whoami'])).toEqual(whoami);
    // The screen printed for `whoami -h` is kept, and printed again from the cache for `-h`.
    const kept = (await readdir(join(cache, 'code-cache'))).filter(
      (f) => f.endsWith('.txt') && !f.includes('update'),
    );
    let file = '';
    for (const f of kept)
      if ((await readFile(join(cache, 'code-cache', f), 'utf8')).split('\n')[0]!.includes('["whoami"]'))
        file = join(cache, 'code-cache', f);
    expect(file).not.toBe('');
    // The key line and the copy of package.json after it (src/boot.ts) left as they are.
    const bytes = await readFile(file);
    const end =
      bytes.indexOf(10) + 1 + (await readFile(new URL('../../package.json', import.meta.url))).length;
    await writeFile(file, Buffer.concat([bytes.subarray(0, end), Buffer.from('KEPT\n')]));
    expect((await ctx.mkt(['whoami', '-h'], { MKT_CACHE_DIR: cache })).stdout).toBe('KEPT\n');
    // After `--`, -h is the child's: sandbox exec passes it on as typed, in order.
    const child = await ctx.mkt(['sandbox', 'exec', '--', 'sh', '-c', 'echo "$0 $1"', 'sh', '-h']);
    expect(child, child.stderr).toMatchObject({ code: 0, stdout: 'sh -h\n' });
  }, 60_000);

  it('mkt --jq .email whoami (and --jq=) as after the command', async () => {
    for (const args of [
      ['--jq', '.email', 'whoami'],
      ['--jq=.email', 'whoami'],
      ['whoami', '--jq', '.email'],
    ]) {
      const r = await ctx.mkt(args);
      expect(r, args.join(' ')).toMatchObject({ code: 0, stdout: 'dev@sandbox.test\n' });
    }
    // With the other global flags around it.
    const many = await ctx.mkt(['--profile', 'default', '--jq', '.name', '--verbose', 'whoami']);
    expect(many.code, many.stderr).toBe(0);
    expect(many.stdout).toBe('Dev Eloper\n');
  });
});

describe('not signed in', () => {
  it('apps list, init and login say so in words, and give the line that works, which works', async () => {
    const line = `mkt login --client-id ${seed().app.client_id} --scope apps:write`;
    const refusals = [
      await ctx.mkt(['apps', 'list'], nobody),
      await ctx.mkt(['init', join(ctx.dir, 'my-app'), '--name', 'My App', '--template', 'node'], nobody),
      await ctx.mkt(['whoami'], nobody),
    ];
    for (const r of refusals) {
      expect(r.code, r.stderr).toBe(4);
      expect(r.stderr).toMatch(/^Error: Not signed in to http:\/\/127\.0\.0\.1:\d+ /);
      expect(r.stderr).not.toMatch(/Authorization|Bearer|X-API-Key|Authenticat/i);
      expect(r.stderr).toContain(`  Try: ${line}\n`);
    }
    expect(await readdir(ctx.dir)).not.toContain('my-app');
    // `mkt login` alone: no client id, and the hint needs no sign-in to work.
    const bare = await ctx.mkt(['login', '--no-browser'], nobody);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain(`  Try: ${line}\n`);
    expect(bare.stderr).not.toMatch(/mkt apps list/);

    // The line, run as printed (the person approves as the developer, preselected).
    const words = line.split(' ').slice(1);
    const login = await ctx.mkt(words, {
      ...nobody,
      MKT_CLIENT_SECRET: seed().app.client_secret,
      MKT_BROWSER: `"${process.execPath}" "${PERSON}"`,
    });
    expect(login.code, login.stderr).toBe(0);
    const apps = await ctx.mkt(['apps', 'list'], nobody);
    expect(apps.code, apps.stderr).toBe(0);
    expect(apps.stdout).toContain(seed().app.id);
  }, 60_000);

  it('off a local sandbox, the hint names the client id to fill in and the API key way', async () => {
    // A marketplace that is no sandbox: it answers 401 to everything, its metadata included, so
    // mkt knows no client id to fill in.
    const server = await startServer((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(
        '{"error":{"code":"unauthorized","message":"Authenticate with \\"Authorization: Bearer <token>\\""}}',
      );
    });
    try {
      // A profile of its own: the file's other one is signed in elsewhere by now.
      const r = await ctx.mkt(['apps', 'list'], {
        ...nobody,
        MKT_SITE_URL: server.url,
        MKT_PROFILE: 'fresh',
      });
      expect(r.code).toBe(4);
      expect(r.stderr).toMatch(/^Error: Not signed in to /);
      expect(r.stderr).not.toMatch(/Bearer/);
      expect(r.stderr).toContain("  Try: mkt login --client-id cid_…   (your app's client id)\n");
      expect(r.stderr).toContain('  Try: mkt login --with-api-key < key.txt\n');
    } finally {
      await server.close();
    }
  });
});

describe('a second mkt sandbox start on the same folder', () => {
  it('says that another sandbox runs there (its pid), not that the port is busy', async () => {
    const data = join(ctx.dir, 'second-start');
    const first = startMkt(['sandbox', 'start', '--port', '0', '--data-dir', data], ctx.dir, {
      env: nobody,
      timeoutMs: 60_000,
    });
    try {
      await first.waitForStderr(/Press Ctrl-C to stop/, 30_000).catch(() => undefined);
      const site = /Site URL:\s+(\S+)/.exec(first.stdout() + first.stderr())![1]!;
      const port = new URL(site).port;
      const second = await ctx.mkt(['sandbox', 'start', '--port', port, '--data-dir', data], nobody);
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(
        new RegExp(
          `^Error: Another sandbox is running on ${data} at ${site} \\(process ${first.child.pid}\\)`,
        ),
      );
      expect(second.stderr).not.toMatch(/in use|--port 0/);
      expect(second.stderr).toContain(`  Try: mkt sandbox stop --data-dir ${data}\n`);
    } finally {
      first.child.kill('SIGINT');
      await first.exit();
    }
  }, 60_000);
});

describe('webhooks resend to a handler that refuses', () => {
  it('shows what the handler answered, escaped and cut short, and the journal keeps it', async () => {
    const data = { MKT_DATA_DIR: join(ctx.dir, 'resend-data') };
    await mkdir(data.MKT_DATA_DIR);
    const listen = startMkt(['webhooks', 'listen'], ctx.dir, {
      env: { ...ctx.env, ...data },
      timeoutMs: 60_000,
    });
    let id: string;
    try {
      await listen.waitForStderr(/Ready/);
      const sent = await ctx.mkt(['trigger', 'subscription.created', '--plan', 'pro-monthly']);
      expect(sent.code, sent.stderr).toBe(0);
      id = sent.stdout.trim();
      await listen.waitFor((lines) => lines.some((l) => String(l.text).includes(`${id}  relay`)));
    } finally {
      listen.child.kill('SIGINT');
      await listen.exit();
    }
    const answer = `signature refused\u001b[2J by the handler: ${'x'.repeat(300)}`;
    const handler = await startServer((_req, res) => {
      res.writeHead(401, { 'content-type': 'text/plain' });
      res.end(answer);
    });
    try {
      const r = await ctx.mkt(['webhooks', 'resend', id, '--forward-to', handler.url], data);
      expect(r.code).toBe(1);
      const said = /^Error: Resending .* failed: (.*)$/m.exec(r.stderr)![1]!;
      expect(said).toMatch(/^HTTP 401; it answered: signature refused\\u001b\[2J by the handler: x+…\.$/);
      expect(said.length).toBeLessThan(120);
      expect(r.stderr).not.toContain('\u001b[2J');
      const list = await ctx.mkt(['webhooks', 'deliveries', '--json'], data);
      const delivery = (
        JSON.parse(list.stdout) as Array<{ id: string; response_excerpt: string | null }>
      ).find((d) => d.id === id)!;
      expect(delivery.response_excerpt).toBe(answer);
    } finally {
      await handler.close();
    }
  }, 60_000);
});

describe('sandbox exec ends through the error every command uses', () => {
  it("exits with its command's code (128+n for a signal) and adds no words of its own", async () => {
    const seven = await ctx.mkt(['sandbox', 'exec', '--', 'sh', '-c', 'echo ran; exit 7'], nobody);
    expect(seven).toMatchObject({ code: 7, stdout: 'ran\n', stderr: '' });
    const killed = await ctx.mkt(['sandbox', 'exec', '--', 'sh', '-c', 'kill -TERM $$'], nobody);
    expect(killed).toMatchObject({ code: 143, stderr: '' });
    const ok = await ctx.mkt(['sandbox', 'exec', '--', 'true'], nobody);
    expect(ok).toMatchObject({ code: 0, stderr: '' });
    // And so its source: no exit code of its own.
    const source = await readFile(new URL('../../src/commands/sandbox/exec.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(/process\.exitCode|this\.exit\(/);
  }, 60_000);
});
