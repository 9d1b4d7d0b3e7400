// Device sign-in keeps its polling interval within [5 s, 60 s] whatever the server names: 0.000001
// would poll hundreds of times a second, and 1e309 or 3000000 s overflow Node's timer to 1 ms (with
// a TimeoutOverflowWarning each poll). A real authorization server on 127.0.0.1 counts the polls.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startMkt, tempDir } from '../support/cli.js';
import { startServer, type TestServer } from '../support/server.js';

let dir: { path: string; remove(): Promise<void> };
let server: TestServer | undefined;
let polls = 0;
beforeEach(async () => {
  dir = await tempDir();
  polls = 0;
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await dir.remove();
});

/** An authorization server whose device endpoint names `interval` (raw JSON text) and whose token endpoint says "pending". */
async function serverNaming(interval: string): Promise<TestServer> {
  return startServer((req, res) => {
    const site = `http://${req.headers.host}`;
    res.setHeader('content-type', 'application/json');
    if (req.url?.startsWith('/.well-known/')) {
      res.end(
        JSON.stringify({
          issuer: site,
          authorization_endpoint: `${site}/oauth/authorize`,
          token_endpoint: `${site}/oauth/token`,
          device_authorization_endpoint: `${site}/oauth/device_authorization`,
        }),
      );
    } else if (req.url === '/oauth/device_authorization') {
      res.end(
        `{"device_code":"dc","user_code":"ABCD-EFGH","verification_uri":"${site}/device","expires_in":600,"interval":${interval}}`,
      );
    } else if (req.url === '/oauth/token') {
      polls++;
      res.statusCode = 400;
      res.end(JSON.stringify({ error: 'authorization_pending' }));
    } else {
      res.statusCode = 404;
      res.end('{}');
    }
  });
}

describe('device sign-in', () => {
  for (const interval of ['0.000001', '1e309', '3000000']) {
    it(`polls no sooner than every 5 s when the server names interval ${interval}, with no timer warning`, async () => {
      server = await serverNaming(interval);
      const m = startMkt(['login', '--device', '--client-id', 'cid_x'], dir.path, {
        env: { MKT_SITE_URL: server.url, MKT_CLIENT_SECRET: 'cs_x' },
        timeoutMs: 20_000,
      });
      await m.waitForStderr(/enter the code/);
      await new Promise((r) => setTimeout(r, 3_000));
      m.child.kill('SIGINT');
      await m.exit();
      expect(polls).toBe(0);
      expect(m.stderr()).not.toContain('TimeoutOverflowWarning');
    });
  }
});
