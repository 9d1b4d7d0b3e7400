// A hostile OAuth server of the test's own: its token endpoint answers what the test says (a token
// type that is not Bearer, control characters in a token), and /api/v1/whoami takes any bearer.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startServer, type TestServer } from '../../support/server.js';

export async function startHostileTokenServer(answer: () => Record<string, unknown>): Promise<TestServer> {
  return startServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.method === 'POST' && req.url === '/api/oauth/token') return res.end(JSON.stringify(answer()));
    if (req.url === '/api/v1/whoami')
      return res.end(
        JSON.stringify({ id: 'usr_1', name: 'Ann', email: 'ann@example.com', avatar_url: null }),
      );
    res.writeHead(404).end('{"error":{"code":"not_found","message":"not found"}}');
  });
}

/** A signed-in profile whose access token has expired (the next command refreshes it at `siteUrl`). */
export async function expiredSignIn(configDir: string, siteUrl: string): Promise<void> {
  const expired = {
    access_token: 'at_old',
    refresh_token: 'rt_old',
    token_type: 'Bearer',
    expires_at: Date.now() - 1000,
    issued_at: Date.now() - 3_600_000,
    client_id: 'cl_1',
    site_url: siteUrl,
  };
  await writeFile(
    join(configDir, 'credentials.json'),
    JSON.stringify({ 'default:oauth': JSON.stringify(expired), 'default:client-secret:cl_1': 'secret_1' }),
    { mode: 0o600 },
  );
}
