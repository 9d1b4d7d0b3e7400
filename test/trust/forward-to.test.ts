// `--forward-to` takes what people type for a server on their machine (`3000`, `:3000/hooks`,
// `localhost:3000/hooks`, `127.0.0.1:3000`, a URL) and means http://localhost:3000/…, never the IPv4
// number 0.0.11.184; a destination off this machine is named as such on the first line.
import { describe, expect, it } from 'vitest';
import { post, sign, spawnListen, useListenFixture } from '../webhooks/helpers.js';

const SECRET = 'whsec_forward_to';
const fx = useListenFixture();

async function ready(forwardTo: string, json = true) {
  const l = spawnListen(
    ['--no-relay', '--forward-to', forwardTo],
    fx.dir,
    { MKT_WEBHOOK_SECRET: SECRET },
    { json },
  );
  fx.running.push(l);
  if (json) await l.waitFor((lines) => lines.some((x) => x.type === 'ready'));
  else await l.waitForStderr(/Ready\./);
  return l;
}

describe('--forward-to as people type it', () => {
  it('a port, :port/path, localhost:port/path and 127.0.0.1:port are this machine', async () => {
    const port = fx.target.port;
    const cases: Array<[string, string]> = [
      [`${port}`, `http://localhost:${port}/`],
      [`:${port}/webhooks`, `http://localhost:${port}/webhooks`],
      [`localhost:${port}/webhooks`, `http://localhost:${port}/webhooks`],
      [`127.0.0.1:${port}`, `http://127.0.0.1:${port}/`],
      [`http://127.0.0.1:${port}/webhooks`, `http://127.0.0.1:${port}/webhooks`],
    ];
    for (const [typed, meant] of cases) {
      const l = await ready(typed);
      const r = l.lines.find((x) => x.type === 'ready')!;
      expect(r.forward_to, typed).toBe(meant);
      expect(l.stderr(), typed).not.toContain('not on this machine');
      const body = JSON.stringify({
        event: 'user.authorized',
        timestamp: new Date().toISOString(),
        data: {},
      });
      const id = `dlv_typed_${typed.replace(/\W/g, '_')}`;
      await post(String(r.receiver), body, {
        'x-marketplace-signature': sign(SECRET, body),
        'x-marketplace-delivery': id,
      });
      await l.waitFor((lines) => lines.some((x) => x.type === 'forwarded' && x.id === id));
      expect(fx.target.received.at(-1)!.url).toBe(new URL(meant).pathname);
      l.child.kill('SIGKILL');
      await l.exit();
    }
  });

  it('a destination off this machine is named as such on the first line', async () => {
    const l = await ready('https://hooks.example.com/in', false);
    const first = l.stderr().split('\n')[0];
    expect(first).toContain('--forward-to https://hooks.example.com/in is not on this machine');
    l.child.kill('SIGKILL'); // one listener per journal
    await l.exit();
    const json = await ready('hooks.example.com:3000/in');
    expect(JSON.parse(json.stderr().split('\n')[0]!)).toMatchObject({
      type: 'warning',
      message: expect.stringContaining('http://hooks.example.com:3000/in is not on this machine'),
    });
  });
});
