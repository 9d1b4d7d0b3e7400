import { describe, expect, it } from 'vitest';
import { runMkt } from '../support/cli.js';
import { developerToken, useSandbox } from '../support/sandbox.js';
import { json, startServer } from '../support/server.js';

// `mkt trigger EVENT` without --user: the dry run shows the user the send goes to, the send goes to
// that user, and an app without test users is refused (never the developer).

const ctx = useSandbox();
const recipient = (stdout: string) =>
  (JSON.parse(stdout) as { envelope: { data: { user_id?: string } } }).envelope.data.user_id;

describe('mkt trigger without --user', () => {
  it('an app with no test users: the dry run and the send refuse, naming how to make one', async () => {
    const dev = await developerToken(ctx.sandbox, ['identity:read', 'apps:write']);
    const asDev = { MKT_API_KEY: undefined, MKT_ACCESS_TOKEN: dev };
    const created = await ctx.mkt(['apps', 'create', '--name', 'Empty', '--json'], asDev);
    expect(created.code, created.stderr).toBe(0);
    const app = (JSON.parse(created.stdout) as { id: string }).id;
    const key = await ctx.mkt(['keys', 'create', '--app', app, '--mode', 'test'], asDev);
    expect(key.code, key.stderr).toBe(0);
    const asKey = { MKT_API_KEY: key.stdout.trim() };
    for (const argv of [
      ['trigger', 'user.authorized', '--dry-run'],
      ['trigger', 'user.authorized'],
      ['trigger', 'user.revoked', '--dry-run'],
    ]) {
      const res = await ctx.mkt(argv, asKey);
      expect(res.code, res.stdout + res.stderr).toBe(1);
      expect(res.stderr).toMatch(
        new RegExp(`^Error: App ${app} has no test users to send user\\.\\w+ to\\.\\n`),
      );
      expect(res.stderr).toContain(`Try: mkt simulator users create --plan `);
      expect(res.stderr).not.toContain(ctx.sandbox.seed.developer.id);
    }
  });

  it('the dry run names the user the send goes to', async () => {
    for (const event of ['user.authorized', 'subscription.cancelled', 'user.revoked']) {
      const dry = await ctx.mkt(['trigger', event, '--dry-run', '--json']);
      expect(dry.code, dry.stderr).toBe(0);
      const shown = recipient(dry.stdout);
      expect(shown).toMatch(/^usr_/);
      expect(shown).not.toBe(ctx.sandbox.seed.developer.id);
      const sent = await ctx.mkt(['trigger', event, '--json']);
      expect(sent.code, sent.stderr).toBe(0);
      expect(recipient(sent.stdout)).toBe(shown);
    }
    const created = await ctx.mkt(['trigger', 'subscription.created', '--dry-run']);
    expect(created.code).toBe(0);
    expect(created.stderr).toContain('a new test user');
  });

  it('a marketplace that does not list test users picks the user itself, as published', async () => {
    const server = await startServer((req, res, seen) => {
      const path = new URL(req.url!, 'http://x').pathname;
      if (path === '/api/v1/apps/app_x/plans')
        return json(res, 200, { data: [{ id: 'pro', kind: 'monthly' }] });
      if (path === '/api/v1/simulator/events') {
        const body = JSON.parse(seen.body) as { event: string; data: Record<string, unknown> };
        const envelope = {
          event: body.event,
          timestamp: '2026-01-01T00:00:00Z',
          data: { ...body.data, user_id: 'usr_theirs' },
        };
        return json(res, 201, {
          delivery_id: 'dlv_1',
          event: body.event,
          envelope,
          webhook: { url: null, status: 'no_url', response_status: null, error: null },
          listeners: 0,
        });
      }
      return json(res, 404, { error: { code: 'not_found', message: 'No such endpoint.' } });
    });
    try {
      const env = { env: { MKT_SITE_URL: server.url, MKT_API_KEY: 'test_published1' } };
      const dry = await runMkt(['trigger', 'user.revoked', '--app', 'app_x', '--dry-run'], ctx.dir, env);
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stderr).toContain('left to the marketplace');
      const sent = await runMkt(['trigger', 'user.revoked', '--app', 'app_x', '--json'], ctx.dir, env);
      expect(sent.code, sent.stderr).toBe(0);
      const post = server.seen.find((s) => s.url.startsWith('/api/v1/simulator/events'))!;
      expect(JSON.parse(post.body).data.user_id).toBeUndefined();
    } finally {
      await server.close();
    }
  });
});
