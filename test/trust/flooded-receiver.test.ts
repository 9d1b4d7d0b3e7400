// A flood of refused requests (unsigned, cross-site) never pushes out what the receiver accepted:
// they are counted, a small sample journaled; a delivery not forwarded yet or failed survives
// rotation; the sender's credential headers are redacted in the journal and forwarded unchanged.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMkt, tempDir } from '../support/cli.js';
import { DeliveryLog, readJournal, type ReceivedRecord } from '../../src/webhooks/journal.js';
import { post, sign, spawnListen, useListenFixture } from '../webhooks/helpers.js';

const SECRET = 'whsec_flood';
const fx = useListenFixture();

/** Every journal file under the config folder (the data folder holds one journal per app). */
async function journalFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { recursive: true }))
    if (/journal-\d+\.jsonl$/.test(entry)) found.push(join(dir, entry));
  return found;
}

describe('a flooded receiver', () => {
  it('keeps a failed delivery resendable after 60 unsigned 1 MiB POSTs, and no credential header in its journal', async () => {
    fx.target.answer(() => 422);
    const l = spawnListen(['--no-relay', '--forward-to', fx.target.url, '--forward-backoff', '50'], fx.dir, {
      MKT_WEBHOOK_SECRET: SECRET,
    });
    fx.running.push(l);
    await l.waitFor((lines) => lines.some((x) => x.type === 'ready'));
    const url = String(l.lines.find((x) => x.type === 'ready')!.receiver);
    const body = Buffer.from(
      JSON.stringify({ event: 'user.authorized', timestamp: new Date().toISOString(), data: { n: 1 } }),
    );
    const id = `dlv_flood_${process.pid}`;
    await post(url, body, {
      'x-marketplace-signature': sign(SECRET, body),
      'x-marketplace-delivery': id,
      'x-marketplace-event': 'user.authorized',
      authorization: 'Bearer sender-secret-token',
      cookie: 'sid=sender-cookie',
      'x-api-key': 'sender-api-key',
    });
    await l.waitFor((lines) => lines.some((x) => x.type === 'forward_failed' && x.id === id));
    // Forwarded as it came.
    expect(fx.target.received[0]!.headers.authorization).toBe('Bearer sender-secret-token');

    const junk = Buffer.alloc(1024 * 1024 - 64, 0x61);
    let refused = 0;
    for (let i = 0; i < 60; i++) {
      const headers: Record<string, string> =
        i % 2 ? { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' } : {};
      const res = await post(url, junk, { 'content-type': 'text/plain', ...headers });
      if (res.status === 401 || res.status === 400) refused++;
    }
    expect(refused).toBe(60);
    l.child.kill('SIGINT');
    await l.exit();

    const files = await journalFiles(fx.dir);
    let bytes = 0;
    for (const f of files) {
      bytes += (await stat(f)).size;
      const text = await readFile(f, 'utf8');
      for (const secret of ['sender-secret-token', 'sender-cookie', 'sender-api-key'])
        expect(text).not.toContain(secret);
    }
    // The refused requests are not what fills the journal (60 MiB were sent).
    expect(bytes).toBeLessThan(2 * 1024 * 1024);

    fx.target.answer(() => 200);
    const resent = await runMkt(['webhooks', 'resend', id, '--json'], fx.dir);
    expect(resent.code, resent.stderr).toBe(0);
    expect(JSON.parse(resent.stdout)).toMatchObject({ id, ok: true });
  }, 120_000);
});

describe('journal rotation', () => {
  it('carries a delivery not yet forwarded and a failed one into the new file before removing the old', async () => {
    const dir = await tempDir();
    try {
      const log = await DeliveryLog.open(dir.path, { maxFileBytes: 4096, keepFiles: 2 });
      const record = (id: string): ReceivedRecord => ({
        t: 'received',
        id,
        at: new Date().toISOString(),
        source: 'local',
        headers: {},
        body: 'x'.repeat(200),
      });
      await log.append(record('dlv_waiting'));
      await log.append(record('dlv_failed'), { t: 'status', id: 'dlv_failed', at: '', status: 'failed' });
      // 200 more forwarded deliveries: many rotations, old files removed.
      for (let i = 0; i < 200; i++)
        await log.append(record(`dlv_ok_${i}`), {
          t: 'status',
          id: `dlv_ok_${i}`,
          at: '',
          status: 'forwarded',
        });
      await log.close();
      const records = await readJournal(dir.path);
      const ids = records.filter((r) => r.t === 'received').map((r) => (r as ReceivedRecord).id);
      expect(ids).toContain('dlv_waiting');
      expect(ids).toContain('dlv_failed');
      expect(ids).not.toContain('dlv_ok_0');
      const reopened = await DeliveryLog.open(dir.path);
      expect(reopened.statusOf('dlv_failed')).toBe('failed');
      expect(reopened.pending().map((r) => r.id)).toEqual(['dlv_waiting']);
      await reopened.close();
    } finally {
      await dir.remove();
    }
  });
});
