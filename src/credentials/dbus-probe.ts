import type { NetConnectOpts } from 'node:net';

/**
 * Whether the D-Bus session bus answers its authentication handshake within `timeoutMs`.
 * @napi-rs/keyring connects to the bus synchronously while building an entry, so a bus that
 * accepts and never answers would freeze the whole process; this check runs first, off the native code.
 */
export async function sessionBusAnswers(address: string | undefined, timeoutMs: number): Promise<boolean> {
  if (!address) return false;
  const target = socketFor(address);
  if (!target) return true; // a transport we do not speak (launchd, systemd): let the library try it
  // Here, not at the top: every command loads this module, and node:net with its streams costs ms.
  const { connect } = await import('node:net');
  return new Promise<boolean>((resolve) => {
    const socket = connect(target);
    const finish = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    let reply = '';
    socket.once('connect', () => {
      const uid = String(process.getuid?.() ?? 0);
      socket.write(`\0AUTH EXTERNAL ${Buffer.from(uid).toString('hex')}\r\n`);
    });
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) finish(/^(OK|REJECTED)\b/.test(reply));
    });
    socket.once('error', () => finish(false));
    socket.once('close', () => finish(false));
  });
}

/** The first `unix:path=`, `unix:abstract=` or `tcp:` entry of a D-Bus address, as net.connect options. */
function socketFor(address: string): NetConnectOpts | undefined {
  for (const entry of address.split(';')) {
    const [transport, rest = ''] = entry.split(/:(.*)/s);
    const params = new Map(rest.split(',').map((kv) => kv.split('=') as [string, string]));
    const unescape = (v: string | undefined) => (v === undefined ? undefined : decodeURIComponent(v));
    if (transport === 'unix' && params.has('path')) return { path: unescape(params.get('path'))! };
    if (transport === 'unix' && params.has('abstract'))
      return { path: `\0${unescape(params.get('abstract'))}` };
    if (transport === 'tcp' && params.has('port')) {
      return { host: params.get('host') ?? '127.0.0.1', port: Number(params.get('port')) };
    }
  }
  return undefined;
}
