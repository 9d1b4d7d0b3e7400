import { appendFile, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMkt, tempDir } from '../support/cli.js';
import { DeliveryLog } from '../../src/webhooks/journal.js';
import { sign } from './helpers.js';

let dir: { path: string; remove(): Promise<void> };
beforeEach(async () => (dir = await tempDir()));
afterEach(async () => dir.remove());

const SECRET = 'whsec_test_secret';
const body = (ts = new Date().toISOString()) =>
  JSON.stringify({ event: 'subscription.created', timestamp: ts, data: { user_id: 'usr_1', plan: 'pro' } });

async function verifyCli(payload: string, signature: string, secret = SECRET, extra: string[] = []) {
  const file = join(dir.path, 'body.json');
  await writeFile(file, payload);
  const res = await runMkt(
    ['webhooks', 'verify', '--signature', signature, '--payload', file, '--json', ...extra],
    dir.path,
    {
      env: { MKT_WEBHOOK_SECRET: secret },
    },
  );
  return {
    code: res.code,
    doc: JSON.parse(res.stdout) as {
      valid?: boolean;
      error?: { code: string; message: string; hints?: string[] };
    },
  };
}

describe('mkt webhooks verify', () => {
  it('accepts a valid signature (exit 0)', async () => {
    const b = body();
    const r = await verifyCli(b, sign(SECRET, b));
    expect(r).toMatchObject({ code: 0, doc: { valid: true } });
  });

  it('names the likely reason a signature fails (exit 3)', async () => {
    const b = body();
    expect(await verifyCli(b, sign('whsec_other', b))).toMatchObject({
      code: 3,
      doc: { error: { code: 'wrong_secret' } },
    });
    const pretty = JSON.stringify(JSON.parse(b), null, 2);
    expect(await verifyCli(pretty, sign(SECRET, b))).toMatchObject({
      code: 3,
      doc: { error: { code: 'reserialized_body' } },
    });
    const old = body(new Date(Date.now() - 3_600_000).toISOString());
    const stale = await verifyCli(old, sign(SECRET, old));
    expect(stale).toMatchObject({ code: 3, doc: { error: { code: 'stale_timestamp' } } });
    // One sentence with the age as people say it; the ways out (sync the clock, widen the window) as hints.
    expect(stale.doc.error!.message).toMatch(
      /^The signature is valid, but the timestamp \S+ is 1 hour old, outside the window of 5 minutes\.$/,
    );
    expect(stale.doc.error!.hints!.join('\n')).toMatch(/--tolerance SECONDS[\s\S]*timedatectl set-ntp true/);
    expect(await verifyCli(old, sign(SECRET, old), SECRET, ['--tolerance', '7200'])).toMatchObject({
      code: 0,
    });
    expect(await verifyCli(b, 'sha1=abc')).toMatchObject({
      code: 3,
      doc: { error: { code: 'malformed_signature' } },
    });
  });

  it('takes the secret from the variable named by --secret-env, and says when it is unset (exit 2)', async () => {
    const b = body();
    await writeFile(join(dir.path, 'b.json'), b);
    const ok = await runMkt(
      ['webhooks', 'verify', '--secret-env', 'MY_SECRET', '--signature', sign(SECRET, b), '--payload', '-'],
      dir.path,
      {
        env: { MY_SECRET: SECRET },
        input: b,
      },
    );
    expect(ok.code).toBe(0);
    const unset = await runMkt(
      ['webhooks', 'verify', '--secret-env', 'NOPE', '--signature', sign(SECRET, b), '--payload', '-'],
      dir.path,
      { input: b },
    );
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain('NOPE');
  });
});

describe('DeliveryLog', () => {
  const received = (id: string, seq: number) => ({
    t: 'received' as const,
    id,
    at: new Date().toISOString(),
    source: 'relay' as const,
    seq,
    headers: { 'x-marketplace-delivery': id },
    body: '{"event":"user.revoked"}',
  });

  it('drops a torn last line left by a crash, keeps every earlier entry and appends after it', async () => {
    const jdir = join(dir.path, 'journal');
    await mkdir(jdir);
    const file = join(jdir, 'journal-1.jsonl');
    await writeFile(
      file,
      `${JSON.stringify(received('dlv_a', 1))}\n${JSON.stringify({ t: 'status', id: 'dlv_a', at: 'x', status: 'forwarded' })}\n`,
    );
    await appendFile(file, JSON.stringify(received('dlv_b', 2)).slice(0, 40));
    const warnings: string[] = [];
    const log = await DeliveryLog.open(jdir, { warn: (m) => warnings.push(m) });
    expect(warnings.join()).toMatch(/partly written line/);
    expect(log.statusOf('dlv_a')).toBe('forwarded');
    expect(log.statusOf('dlv_b')).toBeUndefined();
    expect(log.lastSeq).toBe(1);
    await log.append(received('dlv_c', 3));
    await log.close();
    const lines = (await readFile(file, 'utf8'))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string });
    expect(lines.map((l) => l.id)).toEqual(['dlv_a', 'dlv_a', 'dlv_c']);
    const reopened = await DeliveryLog.open(jdir);
    expect(reopened.pending().map((r) => r.id)).toEqual(['dlv_c']);
    expect(reopened.lastSeq).toBe(3);
    await reopened.close();
  });

  it('is its lines and nothing else, whatever the writers: open or after a kill, a resend between', async () => {
    const { appendRecord } = await import('../../src/webhooks/journal.js');
    const jdir = join(dir.path, 'lines');
    const file = join(jdir, 'journal-1.jsonl');
    const log = await DeliveryLog.open(jdir);
    for (let n = 1; n <= 25; n++) await log.append(received(`dlv_${n}`, n));
    await appendRecord(jdir, { t: 'status', id: 'dlv_3', at: new Date().toISOString(), status: 'forwarded' });
    await Promise.all([log.append(received('dlv_26', 26)), log.append(received('dlv_27', 27))]);
    // Read as after a kill -9 (the log never closed), then as `tail` and `wc -l` see it.
    const text = await readFile(file, 'utf8');
    const lines = text.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.filter((l) => l === '')).toEqual([]);
    expect(lines).toHaveLength(28);
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ t: 'received' });
    expect((await stat(file)).size).toBe(Buffer.byteLength(text));
    await log.close();
    expect(await readFile(file, 'utf8')).toBe(text);
  });

  it("gives back the room an older mkt's journal reserved at its end (newlines), on open", async () => {
    const jdir = join(dir.path, 'old-room');
    await mkdir(jdir);
    const file = join(jdir, 'journal-1.jsonl');
    const line = `${JSON.stringify(received('dlv_a', 1))}\n`;
    await writeFile(file, line + '\n'.repeat(4096));
    const log = await DeliveryLog.open(jdir);
    const next = received('dlv_b', 2);
    await log.append(next);
    await log.close();
    expect(await readFile(file, 'utf8')).toBe(`${line}${JSON.stringify(next)}\n`);
  });

  it('gives pending deliveries back in arrival order, also ids that look like numbers', async () => {
    const jdir = join(dir.path, 'order');
    const log = await DeliveryLog.open(jdir);
    for (const [n, id] of ['10', 'dlv_a', '2', '#2', '__proto__'].entries())
      await log.append(received(id, n));
    await log.append({ t: 'status', id: 'dlv_a', at: new Date().toISOString(), status: 'forwarded' });
    expect(log.pending().map((r) => r.id)).toEqual(['10', '2', '#2', '__proto__']);
    await log.close();
    const reopened = await DeliveryLog.open(jdir);
    expect(reopened.pending().map((r) => r.id)).toEqual(['10', '2', '#2', '__proto__']);
    await reopened.close();
  });

  it('drops a torn record in the reserved room and writes over it', async () => {
    const jdir = join(dir.path, 'torn-room');
    await mkdir(jdir);
    const file = join(jdir, 'journal-1.jsonl');
    await writeFile(
      file,
      `${JSON.stringify(received('dlv_a', 1))}\n${JSON.stringify(received('dlv_b', 2)).slice(0, 40)}${'\n'.repeat(500)}`,
    );
    const warnings: string[] = [];
    const log = await DeliveryLog.open(jdir, { warn: (m) => warnings.push(m) });
    expect(warnings.join()).toMatch(/partly written line/);
    expect(log.statusOf('dlv_b')).toBeUndefined();
    await log.append(received('dlv_c', 3));
    await log.close();
    const lines = (await readFile(file, 'utf8')).split('\n').filter(Boolean);
    expect(lines.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(['dlv_a', 'dlv_c']);
  });

  it('keeps a line `resend` appends beside an open journal; later records go after it', async () => {
    const { appendRecord, readJournal, summarize } = await import('../../src/webhooks/journal.js');
    const jdir = join(dir.path, 'beside');
    const log = await DeliveryLog.open(jdir);
    await log.append(received('dlv_a', 1));
    await appendRecord(jdir, { t: 'status', id: 'dlv_a', at: new Date().toISOString(), status: 'forwarded' });
    await log.append(received('dlv_b', 2));
    await log.close();
    const records = await readJournal(jdir);
    expect(records.map((r) => `${r.t}:${(r as { id: string }).id}`)).toEqual([
      'received:dlv_a',
      'status:dlv_a',
      'received:dlv_b',
    ]);
    expect(summarize(records).map((d) => d.status)).toEqual(['forwarded', 'received']);
  });

  it('rotates at the size bound and keeps only the newest files', async () => {
    const jdir = join(dir.path, 'rot');
    const log = await DeliveryLog.open(jdir, { maxFileBytes: 1_000, keepFiles: 3 });
    for (let i = 1; i <= 40; i++) await log.append(received(`dlv_${i}`, i));
    await log.close();
    const { readdir } = await import('node:fs/promises');
    const files = (await readdir(jdir)).sort();
    expect(files).toHaveLength(3);
    const reopened = await DeliveryLog.open(jdir);
    expect(reopened.lastSeq).toBe(40);
    await reopened.close();
  });
  it('keeps every line another process appends between its writes, and still rotates', async () => {
    const jdir = join(dir.path, 'shared');
    const log = await DeliveryLog.open(jdir, { maxFileBytes: 2_000, keepFiles: 5 });
    const { readJournal, summarize } = await import('../../src/webhooks/journal.js');
    for (let i = 1; i <= 12; i++) {
      await log.append(received(`dlv_${i}`, i));
      // What `mkt webhooks resend` does: an outcome line appended to the same file (O_APPEND).
      const { readdir } = await import('node:fs/promises');
      const newest = (await readdir(jdir)).sort().at(-1)!;
      const status = { t: 'status', id: `dlv_${i}`, at: new Date().toISOString(), status: 'forwarded' };
      await appendFile(join(jdir, newest), `${JSON.stringify(status)}\n`);
    }
    await log.close();
    const { readdir } = await import('node:fs/promises');
    expect((await readdir(jdir)).length).toBeGreaterThan(1);
    const rows = summarize(await readJournal(jdir));
    expect(rows.map((d) => `${d.id}:${d.status}`)).toEqual(
      Array.from({ length: 12 }, (_, i) => `dlv_${i + 1}:forwarded`),
    );
  });
  it('keeps the relay position given without a delivery, across reopening and rotation', async () => {
    const jdir = join(dir.path, 'pos');
    const log = await DeliveryLog.open(jdir, { maxFileBytes: 600, keepFiles: 2 });
    expect(log.lastSeq).toBeUndefined();
    await log.append({ t: 'position', at: new Date().toISOString(), seq: 17 });
    await log.close();
    let reopened = await DeliveryLog.open(jdir, { maxFileBytes: 600, keepFiles: 2 });
    expect(reopened.lastSeq).toBe(17);
    // Local deliveries (no sequence numbers) rotate the files that held the position away.
    for (let i = 0; i < 30; i++) {
      await reopened.append({ ...received(`dlv_local${i}`, 0), source: 'local', seq: undefined });
    }
    await reopened.close();
    const { readdir } = await import('node:fs/promises');
    expect(await readdir(jdir)).not.toContain('journal-1.jsonl');
    reopened = await DeliveryLog.open(jdir);
    expect(reopened.lastSeq).toBe(17);
    await reopened.close();
    const { readJournal, summarize } = await import('../../src/webhooks/journal.js');
    expect(summarize(await readJournal(jdir)).every((d) => d.id.startsWith('dlv_local'))).toBe(true);
  });
});
