import { describe, expect, it } from 'vitest';
import { runMkt, startMkt, tempDir } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';
import { startServer } from '../support/server.js';
import { startRecordingServer } from './helpers.js';

// With an API key and neither --app nor a profile default, the commands about "the app" act on the
// key's app: a key acts for its own app only, so GET /apps lists just that one (docs/DECISIONS.md §2).

const ctx = useSandbox();
const app = () => ctx.sandbox.seed.app.id;

describe('a key names its app', () => {
  it('plans, keys and trigger use the app of MKT_API_KEY', async () => {
    const plans = await ctx.mkt(['plans', 'list', '--json']);
    expect(plans.code, plans.stderr).toBe(0);
    expect(JSON.parse(plans.stdout).map((p: { id: string }) => p.id)).toContain('pro-monthly');

    const keys = await ctx.mkt(['keys', 'list', '--json']);
    expect(keys.code, keys.stderr).toBe(0);
    expect(JSON.parse(keys.stdout).length).toBeGreaterThanOrEqual(2);

    const sent = await ctx.mkt(['trigger', 'subscription.created', '--json']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(JSON.parse(sent.stdout).envelope.data.user_id).toMatch(/^usr_/);
  });

  it('webhooks listen and trigger meet on the key’s app without --app', async () => {
    const target = await startServer((_req, res) => res.writeHead(204).end());
    const listen = startMkt(['webhooks', 'listen', '--forward-to', `${target.url}/hooks`], ctx.dir, {
      env: ctx.env,
      timeoutMs: 30_000,
    });
    try {
      await listen.waitForStderr(/Ready/);
      const sent = await ctx.mkt(['trigger', 'user.revoked', '--json']);
      expect(sent.code, sent.stderr).toBe(0);
      const id = JSON.parse(sent.stdout).delivery_id as string;
      for (let i = 0; i < 100 && !target.seen.some((s) => s.headers['x-marketplace-delivery'] === id); i++)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(target.seen.map((s) => s.headers['x-marketplace-delivery'])).toContain(id);
    } finally {
      listen.child.kill('SIGINT');
      await listen.exit();
      await target.close();
    }
  }, 60_000);

  it('uses the app of a stored key (mkt login --with-api-key)', async () => {
    const dir = await tempDir();
    try {
      const env = { MKT_SITE_URL: ctx.sandbox.siteUrl };
      const login = await runMkt(['login', '--with-api-key'], dir.path, {
        env,
        input: `${ctx.sandbox.seed.test_key}\n`,
      });
      expect(login.code, login.stderr).toBe(0);
      const keys = await runMkt(['keys', 'list', '--json'], dir.path, { env });
      expect(keys.code, keys.stderr).toBe(0);
      const get = await runMkt(['apps', 'get', '--json'], dir.path, { env });
      expect(JSON.parse(get.stdout).id).toBe(app());
    } finally {
      await dir.remove();
    }
  });

  it('says it cannot tell when the server lists more than one app for the key (exit 2)', async () => {
    const server = await startRecordingServer(() => ({
      status: 200,
      body: { data: [{ id: 'app_one' }, { id: 'app_two' }], has_more: false },
    }));
    try {
      const res = await runMkt(['keys', 'list'], ctx.dir, {
        env: { MKT_SITE_URL: server.url, MKT_API_KEY: 'test_counting' },
      });
      expect(res.code).toBe(2);
      expect(res.stderr).toContain('does not tell which app this API key belongs to (it lists 2 apps)');
      expect(res.stderr).toContain('pass --app app_…');
      expect(res.stderr).toContain('Try: mkt apps use APP_ID');
      expect(server.seen.map((s) => `${s.method} ${s.url.split('?')[0]}`)).toEqual(['GET /api/v1/apps']);
    } finally {
      await server.close();
    }
  });

  it('with a signed-in developer and no app, it asks for --app before any request', async () => {
    const server = await startRecordingServer();
    try {
      const res = await runMkt(['plans', 'list'], ctx.dir, {
        env: { MKT_SITE_URL: server.url, MKT_ACCESS_TOKEN: 'at_counting' },
      });
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/No app given: pass --app/);
      expect(server.seen).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
