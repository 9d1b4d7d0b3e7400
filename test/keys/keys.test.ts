import { describe, expect, it } from 'vitest';
import { runMkt } from '../support/cli.js';
import { runMktInTty } from '../support/terminal.js';
import { useSandbox } from '../support/sandbox.js';
import { expectRefusedBeforeAnyRequest, startRecordingServer } from '../apps/helpers.js';

const ctx = useSandbox();
const mkt = ctx.mkt;
const app = () => ctx.sandbox.seed.app.id;

async function newTestKey(): Promise<{ id: string; key: string }> {
  const res = await mkt(['keys', 'create', '--app', app(), '--mode', 'test', '--json']);
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout) as { id: string; key: string };
}

describe('mkt keys list', () => {
  it('shows id, mode, last four characters and created, never a whole key', async () => {
    const res = await mkt(['keys', 'list', '--app', app()]);
    expect(res.code, res.stderr).toBe(0);
    const rows = res.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(rows.map((r) => [r[1], r[2]])).toEqual(
      expect.arrayContaining([
        ['test', ctx.sandbox.seed.test_key.slice(-4)],
        ['live', ctx.sandbox.seed.live_key.slice(-4)],
      ]),
    );
    expect(rows.every((r) => r.length === 4 && /^key_/.test(r[0]!))).toBe(true);
    expect(res.stdout).not.toContain(ctx.sandbox.seed.test_key);
    expect(res.stdout).not.toContain(ctx.sandbox.seed.live_key);
  });

  it('gives a JSON array with --json, still without secrets', async () => {
    const res = await mkt(['keys', 'list', '--app', app(), '--json']);
    const keys = JSON.parse(res.stdout) as Array<Record<string, unknown>>;
    expect(keys.length).toBeGreaterThanOrEqual(2);
    for (const key of keys) expect(Object.keys(key).sort()).toEqual(['created_at', 'id', 'last4', 'mode']);
  });

  it('drops a whole key that another server puts in a listing', async () => {
    const server = await startRecordingServer(() => ({
      status: 200,
      body: {
        data: [{ id: 'key_1', mode: 'test', key: 'test_abcdefWXYZ', created_at: 'now' }],
        has_more: false,
      },
    }));
    try {
      const res = await runMkt(['keys', 'list', '--app', 'app_x', '--json'], ctx.dir, {
        env: { MKT_SITE_URL: server.url, MKT_API_KEY: 'test_counting' },
      });
      expect(res.stdout).not.toContain('test_abcdefWXYZ');
      expect(JSON.parse(res.stdout)).toEqual([
        { id: 'key_1', mode: 'test', last4: 'WXYZ', created_at: 'now' },
      ]);
    } finally {
      await server.close();
    }
  });
});

describe('mkt keys create', () => {
  it('prints the key alone when piped, once, and the key works', async () => {
    const res = await mkt(['keys', 'create', '--app', app(), '--mode', 'test']);
    expect(res.code, res.stderr).toBe(0);
    const key = res.stdout.trim();
    expect(res.stdout).toBe(`${key}\n`);
    expect(key).toMatch(/^test_/);
    expect(res.stderr).toMatch(/shown only this once/);
    expect(res.stderr).not.toMatch(/LIVE/);
    const withIt = await runMkt(['apps', 'get', '--app', app(), '--json'], ctx.dir, {
      env: { MKT_SITE_URL: ctx.sandbox.siteUrl, MKT_API_KEY: key },
    });
    expect(withIt.code, withIt.stderr).toBe(0);
    const listed = await mkt(['keys', 'list', '--app', app()]);
    expect(listed.stdout).not.toContain(key);
    expect(listed.stdout).toContain(key.slice(-4));
  });

  it('warns on stderr when the key is live', async () => {
    const res = await mkt(['keys', 'create', '--app', app(), '--mode', 'live', '--json']);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ mode: 'live', key: expect.stringMatching(/^live_/) });
    expect(res.stderr).toMatch(/LIVE key/);
  });
});

describe('mkt keys revoke', () => {
  it('refuses without --yes off a terminal; with --yes the key stops working', async () => {
    const { id, key } = await newTestKey();
    const refused = await mkt(['keys', 'revoke', id, '--app', app()]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--yes');
    const stillWorks = await runMkt(['keys', 'list', '--app', app()], ctx.dir, {
      env: { MKT_SITE_URL: ctx.sandbox.siteUrl, MKT_API_KEY: key },
    });
    expect(stillWorks.code).toBe(0);

    const revoked = await mkt(['keys', 'revoke', id, '--app', app(), '--yes', '--json']);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ id, revoked: true });
    const refusedNow = await runMkt(['keys', 'list', '--app', app()], ctx.dir, {
      env: { MKT_SITE_URL: ctx.sandbox.siteUrl, MKT_API_KEY: key },
    });
    expect(refusedNow.code).toBe(4);
  });

  it('asks on a terminal and revokes on "y"', async () => {
    const { id } = await newTestKey();
    const res = await runMktInTty(['keys', 'revoke', id, '--app', app()], ctx.dir, {
      env: ctx.env,
      waitFor: 'Revoke API key',
      answer: 'y\r',
    });
    expect(res.code, res.stdout).toBe(0);
    const listed = await mkt(['keys', 'list', '--app', app()]);
    expect(listed.stdout).not.toContain(id);
  });

  it('reports an unknown key id with the server’s message (exit 1)', async () => {
    const res = await mkt(['keys', 'revoke', 'key_nope', '--app', app(), '--yes']);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('No key "key_nope"');
  });
});

describe('bad input is refused before any request', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['an unknown mode', ['keys', 'create', '--app', 'app_x', '--mode', 'prod'], /test, live/],
    [
      'the secret instead of the id',
      ['keys', 'revoke', 'test_abc123', '--app', 'app_x', '--yes'],
      /key itself/,
    ],
    ['a key id with a slash', ['keys', 'revoke', 'key_1/../x', '--app', 'app_x', '--yes'], /not a key id/],
    ['revoke without --yes', ['keys', 'revoke', 'key_1', '--app', 'app_x'], /--yes/],
  ];

  it.each(cases)('%s: exit 2', (_name, args, message) =>
    expectRefusedBeforeAnyRequest(args, ctx.dir, message),
  );
});
