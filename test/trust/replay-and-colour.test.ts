// Three hostile cases on `mkt webhooks listen`'s local receiver: one signed body POSTed at once
// under three ids, a flood of forged requests whose weight is in their headers, and a handler that
// answers with colour and conceal sequences.
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMkt } from '../support/cli.js';
import { post, sign, spawnListen, useListenFixture } from '../webhooks/helpers.js';

const SECRET = 'whsec_replay_colour';
const fx = useListenFixture();

async function listen(args: string[], json = true) {
  const l = spawnListen(
    ['--no-relay', '--forward-backoff', '50', ...args],
    fx.dir,
    { MKT_WEBHOOK_SECRET: SECRET },
    { json },
  );
  fx.running.push(l);
  if (json) await l.waitFor((lines) => lines.some((x) => x.type === 'ready'));
  const receiver = json
    ? String(l.lines.find((x) => x.type === 'ready')!.receiver)
    : (await l.waitForStderr(/Receiving on (http:\S+)/))[1]!;
  return Object.assign(l, { receiver });
}

const envelope = (data: object = {}) =>
  JSON.stringify({ event: 'user.authorized', timestamp: new Date().toISOString(), data });

describe('one signed body under many ids at once', () => {
  it('is forwarded once; the other copies are duplicates', async () => {
    const l = await listen(['--forward-to', fx.target.url]);
    const body = envelope({ copy: 'one' });
    const answers = await Promise.all(
      ['dlv_copy_a', 'dlv_copy_b', 'dlv_copy_c'].map((id) =>
        post(l.receiver, body, {
          'x-marketplace-signature': sign(SECRET, body),
          'x-marketplace-delivery': id,
        }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 202]);
    await l.waitFor(
      (lines) => lines.filter((x) => x.type === 'forwarded' || x.type === 'duplicate').length === 3,
    );
    expect(l.lines.filter((x) => x.type === 'forwarded')).toHaveLength(1);
    expect(fx.target.received).toHaveLength(1);
  });
});

describe('forged requests whose weight is in their headers', () => {
  it('are kept in the journal by their whole size: a bounded sample, the journal stays small', async () => {
    const l = await listen([]);
    const pad = 'p'.repeat(12 * 1024);
    const forged = envelope();
    for (let i = 0; i < 600; i += 20)
      await Promise.all(
        Array.from({ length: 20 }, (_, j) =>
          post(l.receiver, forged, {
            'x-marketplace-signature': `sha256=${'0'.repeat(64)}`,
            'x-marketplace-delivery': `dlv_forged_${i + j}`,
            'x-pad': pad,
          }),
        ),
      );
    await l.waitFor((lines) => lines.filter((x) => x.type === 'refused').length === 600);
    const dir = join(fx.dir, 'data', 'webhooks', 'local');
    let bytes = 0;
    for (const name of await readdir(dir))
      if (name.endsWith('.jsonl')) bytes += (await stat(join(dir, name))).size;
    // 600 requests of 12 KiB of headers are 7 MiB; the sample keeps at most 256 KiB of them a file
    // (and the file's reserved room of empty lines is not counted: it is not theirs).
    const written = bytes - 256 * 1024;
    expect(written).toBeLessThan(512 * 1024);
  }, 120_000);
});

describe("a handler's answer with colour and conceal sequences", () => {
  it('reaches the terminal escaped in the live listen line, as in webhooks deliveries', async () => {
    fx.target.answer(() => 400);
    const hostile = '\u001b[31mred\u001b[8mhidden\u001b[0m';
    fx.target.server.removeAllListeners('request');
    fx.target.server.on('request', (req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(400, { 'content-type': 'text/plain' });
        res.end(hostile);
      });
    });
    const l = await listen(['--forward-to', fx.target.url, '--forward-tries', '1'], false);
    const body = envelope();
    await post(l.receiver, body, {
      'x-marketplace-signature': sign(SECRET, body),
      'x-marketplace-delivery': 'dlv_colour',
    });
    await l.waitFor((lines) => lines.some((x) => String(x.text).includes('dlv_colour')));
    const text = l.stdout();
    expect(text).toContain('answer: \\u001b[31mred\\u001b[8mhidden\\u001b[0m');
    expect(text).not.toContain('\u001b');
    l.child.kill('SIGTERM');
    await l.exit();
    const table = await runMkt(['webhooks', 'deliveries'], fx.dir, { env: { FORCE_COLOR: '1' } });
    expect(table.stdout).toContain('\\u001b[31mred\\u001b[8mhidden');
    expect(table.stdout).not.toContain('\u001b[8m');
  });
});
