import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMkt, tempDir } from '../support/cli.js';
import { json, startServer, type TestServer } from '../support/server.js';

describe("mkt names the server's request id", () => {
  let server: TestServer;
  let dir: { path: string; remove(): Promise<void> };
  let env: Record<string, string>;

  beforeAll(async () => {
    server = await startServer((_req, res) =>
      json(
        res,
        404,
        { error: { code: 'not_found', message: 'No app with id "app_x".' } },
        { 'x-request-id': 'req_abc123' },
      ),
    );
    dir = await tempDir();
    env = { MKT_SITE_URL: server.url, MKT_API_KEY: 'test_0123456789abcdef' };
  });
  afterAll(async () => {
    await server.close();
    await dir.remove();
  });

  it('in an error, on its own line', async () => {
    const r = await runMkt(['apps', 'get', '--app', 'app_x'], dir.path, { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Error: No app with id "app_x".');
    expect(r.stderr).toContain('  Request ID: req_abc123\n');
  });

  it('in a --json error document', async () => {
    const r = await runMkt(['apps', 'get', '--app', 'app_x', '--json'], dir.path, { env });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({
      error: { code: 'not_found', message: 'No app with id "app_x".', request_id: 'req_abc123' },
    });
  });

  it('in each --verbose response line', async () => {
    const r = await runMkt(['apps', 'get', '--app', 'app_x', '--verbose'], dir.path, { env });
    expect(r.stderr).toMatch(
      /< 404 GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/apps\/app_x \(\d+ ms, req_abc123\)/,
    );
  });
});
