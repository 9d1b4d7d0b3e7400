// The setup both faults*.test.ts files share: the listen fixture, `listen --no-relay` with its local
// receiver, and signed deliveries made up for the test.
import { sign, spawnListen, type ListenProcess, useListenFixture } from './helpers.js';

export const SECRET = 'whsec_faults';
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sets up a file's tests (the fixture's hooks) and gives its helpers. */
export function useFaultsContext() {
  const fx = useListenFixture();
  let counter = 0;
  /** `listen --no-relay` with its local receiver, forwarding to the target; resolves when ready. */
  async function local(
    extra: string[] = [],
    env: Record<string, string> = {},
  ): Promise<ListenProcess & { url: string }> {
    const l = spawnListen(
      ['--no-relay', '--forward-to', fx.target.url, '--forward-backoff', '50', ...extra],
      fx.dir,
      { MKT_WEBHOOK_SECRET: SECRET, ...env },
    );
    fx.running.push(l);
    await l.waitFor((lines) => lines.some((x) => x.type === 'ready'));
    return Object.assign(l, { url: String(l.lines.find((x) => x.type === 'ready')!.receiver) });
  }
  /** A signed-to-be envelope with a unique body. */
  const envelope = (data: object = {}) =>
    Buffer.from(
      JSON.stringify({
        event: 'user.authorized',
        timestamp: new Date().toISOString(),
        data: { n: ++counter, ...data },
      }),
    );
  const headersFor = (id: string, body: Buffer, secret = SECRET) => ({
    'x-marketplace-signature': sign(secret, body),
    'x-marketplace-delivery': id,
    'x-marketplace-event': 'user.authorized',
  });
  /** A fresh signed delivery: its id, body and headers. */
  function delivery(body?: Buffer): { id: string; body: Buffer; headers: Record<string, string> } {
    const id = `dlv_fault${process.pid}_${++counter}`;
    const bytes = body ?? envelope();
    return { id, body: bytes, headers: headersFor(id, bytes) };
  }
  const forwardedIds = (l: ListenProcess) => l.lines.filter((x) => x.type === 'forwarded').map((x) => x.id);
  const accepted = () =>
    fx.target.received
      .filter((r) => r.answered === 200)
      .map((r) => String(r.headers['x-marketplace-delivery']));
  return { fx, local, envelope, headersFor, delivery, forwardedIds, accepted };
}
