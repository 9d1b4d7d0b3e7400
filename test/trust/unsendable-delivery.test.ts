// A hostile relay sends validly signed deliveries that cannot be sent as received (a control
// character, CR/LF, a space in a name) and ones that carry headers of one hop (Host: evil.example,
// Content-Length, Expect…). Each bad one fails once with its reason, never holds back the next, and
// is not pending after a restart; the relay path drops the hop headers as the local receiver does.
import { describe, expect, it } from 'vitest';
import { useListenFixture, spawnListen } from '../webhooks/helpers.js';
import {
  deliveryFrame,
  envelope,
  positionFrame,
  RELAY_SECRET,
  startHostileRelay,
} from './hostile/streams.js';

const fx = useListenFixture();

const BAD: Array<[string, Record<string, string>]> = [
  ['dlv_ctl', { 'x-marketplace-event': 'subscription.created\u0001' }],
  ['dlv_crlf', { 'x-note': 'a\r\nx-injected: 1' }],
  ['dlv_space', { 'x bad name': 'v' }],
];
const HOP = {
  host: 'evil.example',
  'content-length': '999',
  expect: '100-continue',
  upgrade: 'websocket',
  'keep-alive': 'timeout=1',
  te: 'trailers',
  'proxy-authorization': 'Basic ZXZpbDpldmls',
};

describe('a delivery that cannot be sent as received', () => {
  it('is failed once with its reason, holds nothing back, and is not pending after a restart', async () => {
    const relay = await startHostileRelay((res, last) => {
      if (last !== undefined) return; // after a restart: nothing new
      res.write(positionFrame(0));
      let seq = 0;
      // Each body its own (the same body twice would be a replay).
      for (const [id, headers] of BAD)
        res.write(deliveryFrame(++seq, id, envelope(undefined, { id }), headers));
      res.write(deliveryFrame(++seq, 'dlv_hop', envelope(undefined, { id: 'hop' }), HOP));
      res.write(deliveryFrame(++seq, 'dlv_good', envelope(undefined, { id: 'good' })));
    });
    const env = { MKT_SITE_URL: relay.url, MKT_API_KEY: 'test_hostile', MKT_WEBHOOK_SECRET: RELAY_SECRET };
    const args = ['--app', 'app_hostile', '--forward-to', fx.target.url, '--forward-backoff', '50'];
    try {
      const l = spawnListen(args, fx.dir, env);
      fx.running.push(l);
      await l.waitFor(
        (lines) => lines.filter((x) => x.type === 'forwarded' || x.type === 'forward_failed').length >= 5,
        20_000,
      );
      const failed = l.lines.filter((x) => x.type === 'forward_failed');
      expect(failed.map((x) => x.id).sort()).toEqual(['dlv_crlf', 'dlv_ctl', 'dlv_space']);
      for (const f of failed) expect(String(f.reason)).toMatch(/^not sent: its header/);
      expect(l.stderr()).not.toContain('target_down');
      const got = fx.target.received.map((r) => r.headers['x-marketplace-delivery']);
      expect(got.sort()).toEqual(['dlv_good', 'dlv_hop']);
      const hop = fx.target.received.find((r) => r.headers['x-marketplace-delivery'] === 'dlv_hop')!;
      expect(hop.headers.host).toBe(new URL(fx.target.url).host);
      for (const name of ['expect', 'upgrade', 'keep-alive', 'te', 'proxy-authorization'])
        expect(hop.headers[name], name).toBeUndefined();
      expect(hop.headers['content-length']).toBe(String(hop.raw.length));
      l.child.kill('SIGTERM');
      await l.exit();

      const again = spawnListen(args, fx.dir, env);
      fx.running.push(again);
      await again.waitFor((lines) => lines.some((x) => x.type === 'ready'));
      expect(again.lines.find((x) => x.type === 'ready')).toMatchObject({ pending: 0 });
      expect(fx.target.received).toHaveLength(2);
    } finally {
      await relay.close();
    }
  });
});

describe('a relay sequence number past 2^53', () => {
  it('is said to be one, and never becomes the resume point rounded', async () => {
    const relay = await startHostileRelay((res, last) => {
      if (last !== undefined) return;
      res.write(positionFrame(0));
      res.write(deliveryFrame('9007199254740993', 'dlv_big', envelope()));
    });
    const env = { MKT_SITE_URL: relay.url, MKT_API_KEY: 'test_hostile', MKT_WEBHOOK_SECRET: RELAY_SECRET };
    try {
      const l = spawnListen(['--app', 'app_big'], fx.dir, env);
      fx.running.push(l);
      await l.waitFor((lines) => lines.some((x) => x.id === 'dlv_big'));
      expect(l.stderr()).toContain('sequence number 9007199254740993, beyond what can be counted exactly');
      l.child.kill('SIGTERM');
      await l.exit();
      const again = spawnListen(['--app', 'app_big'], fx.dir, env);
      fx.running.push(again);
      await again.waitFor((lines) => lines.some((x) => x.type === 'ready'));
      expect(again.lines.find((x) => x.type === 'ready')).toMatchObject({ resume_after: 0 });
    } finally {
      await relay.close();
    }
  });
});
