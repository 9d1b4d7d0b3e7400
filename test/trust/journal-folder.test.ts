// The journal lives only where the credentials may: a link planted at a journal file or folder, a
// folder anyone may write and one of another user are each refused or tightened, as the config folder
// is; two `resend --status failed` at once forward each failed delivery once.
import { chmod, chown, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMkt } from '../support/cli.js';
import { post, sign, spawnListen, useListenFixture } from '../webhooks/helpers.js';

const SECRET = 'whsec_journal_folder';
const fx = useListenFixture();
const env = () => ({ MKT_WEBHOOK_SECRET: SECRET });
const journals = () => join(fx.dir, 'data', 'webhooks');
/** listen --no-relay for `app`, as a user runs it; killed after 10 s if it does not stop by itself. */
const listen = (app: string) =>
  runMkt(['webhooks', 'listen', '--no-relay', '--app', app], fx.dir, { env: env(), timeoutMs: 10_000 });

describe('the journal folder', () => {
  it('refuses a journal file that is a symbolic link, and leaves the file behind it as it was', async () => {
    const precious = join(fx.dir, 'precious.txt');
    await writeFile(precious, 'keep me\n');
    await mkdir(join(journals(), 'app_link'), { recursive: true, mode: 0o700 });
    await symlink(precious, join(journals(), 'app_link', 'journal-1.jsonl'));
    const r = await listen('app_link');
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain('journal-1.jsonl is a symbolic link');
    expect(await readFile(precious, 'utf8')).toBe('keep me\n');
  });

  it('refuses a journal folder that is a symbolic link, writing nothing through it', async () => {
    const elsewhere = join(fx.dir, 'elsewhere');
    await mkdir(elsewhere, { mode: 0o700 });
    await mkdir(journals(), { recursive: true, mode: 0o700 });
    await symlink(elsewhere, join(journals(), 'app_dirlink'));
    const r = await listen('app_dirlink');
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`The journal folder ${join(journals(), 'app_dirlink')} is a symbolic link`);
    const { readdir } = await import('node:fs/promises');
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it('takes write access away from a 0777 journal folder with one warning (0700 after)', async () => {
    const folder = join(journals(), 'app_open');
    await mkdir(folder, { recursive: true });
    await chmod(folder, 0o777);
    const l = spawnListen(['--no-relay', '--app', 'app_open'], fx.dir, env());
    fx.running.push(l);
    await l.waitFor((lines) => lines.some((x) => x.type === 'ready'));
    expect((await stat(folder)).mode & 0o777).toBe(0o700);
    expect(l.stderr().match(/writable by others/g)).toHaveLength(1);
  });

  it.runIf(process.getuid?.() === 0)('refuses a journal folder another user owns', async () => {
    const folder = join(journals(), 'app_theirs');
    await mkdir(folder, { recursive: true, mode: 0o700 });
    await chown(folder, 65534, 65534);
    const r = await listen('app_theirs');
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`The journal folder ${folder} belongs to another user (uid 65534)`);
    const resend = await runMkt(['webhooks', 'resend', '--status', 'failed', '--app', 'app_theirs'], fx.dir, {
      env: env(),
    });
    expect(resend.code).toBe(1);
    expect(resend.stderr).toContain('belongs to another user');
  });
});

describe('two resends of every failed delivery at once', () => {
  it('forward each failed delivery once between them', async () => {
    // Six deliveries that the handler refuses (400): failed.
    fx.target.answer(() => 400);
    const l = spawnListen(
      ['--no-relay', '--forward-to', fx.target.url, '--forward-tries', '1'],
      fx.dir,
      env(),
    );
    fx.running.push(l);
    await l.waitFor((lines) => lines.some((x) => x.type === 'ready'));
    const receiver = String(l.lines.find((x) => x.type === 'ready')!.receiver);
    for (let i = 0; i < 6; i++) {
      const body = JSON.stringify({
        event: 'user.authorized',
        timestamp: new Date().toISOString(),
        data: { i },
      });
      await post(receiver, body, {
        'x-marketplace-signature': sign(SECRET, body),
        'x-marketplace-delivery': `dlv_rs_${i}`,
      });
    }
    await l.waitFor((lines) => lines.filter((x) => x.type === 'forward_failed').length === 6);
    l.child.kill('SIGTERM');
    await l.exit();
    fx.target.answer(() => 200);
    const before = fx.target.received.length;
    const both = await Promise.all(
      [1, 2].map(() =>
        runMkt(['webhooks', 'resend', '--status', 'failed', '--json'], fx.dir, { env: env() }),
      ),
    );
    for (const r of both) expect(r.code, r.stderr).toBe(0);
    const again = fx.target.received.slice(before).map((r) => String(r.headers['x-marketplace-delivery']));
    expect(again.sort()).toEqual([0, 1, 2, 3, 4, 5].map((i) => `dlv_rs_${i}`));
  });
});

describe('a --forward-to URL with a password', () => {
  it('is kept in the credential store, never in clear in the journal, and resend finds it there', async () => {
    const target = new URL(fx.target.url);
    target.username = 'ann';
    target.password = 's3cret-pw';
    const l = spawnListen(['--no-relay', '--forward-to', target.href], fx.dir, env());
    fx.running.push(l);
    await l.waitFor((lines) => lines.some((x) => x.type === 'ready'));
    const receiver = String(l.lines.find((x) => x.type === 'ready')!.receiver);
    const body = JSON.stringify({ event: 'user.authorized', timestamp: new Date().toISOString(), data: {} });
    await post(receiver, body, {
      'x-marketplace-signature': sign(SECRET, body),
      'x-marketplace-delivery': 'dlv_pw',
    });
    await l.waitFor((lines) => lines.some((x) => x.type === 'forwarded'));
    l.child.kill('SIGTERM');
    await l.exit();
    const basic = `Basic ${Buffer.from('ann:s3cret-pw').toString('base64')}`;
    expect(fx.target.received[0]!.headers.authorization).toBe(basic);
    const { readdir } = await import('node:fs/promises');
    const dir = join(journals(), 'local');
    for (const name of await readdir(dir))
      expect(await readFile(join(dir, name), 'utf8')).not.toContain('s3cret-pw');
    expect(await readFile(join(fx.dir, 'credentials.json'), 'utf8')).toContain('s3cret-pw');
    const again = await runMkt(['webhooks', 'resend', 'dlv_pw'], fx.dir, { env: env() });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr + again.stdout).not.toContain('s3cret-pw');
    expect(fx.target.received[1]!.headers.authorization).toBe(basic);
    for (const name of await readdir(dir))
      expect(await readFile(join(dir, name), 'utf8')).not.toContain('s3cret-pw');
  });
});
