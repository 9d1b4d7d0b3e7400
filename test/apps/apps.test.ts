import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runMkt, tempDir } from '../support/cli.js';
import { developerToken, useSandbox } from '../support/sandbox.js';
import { runMktInTty } from '../support/terminal.js';
import { expectRefusedBeforeAnyRequest, startRecordingServer } from './helpers.js';

const ctx = useSandbox();
let asKey: Record<string, string>;
let asOwner: Record<string, string>;

beforeAll(async () => {
  asKey = { MKT_SITE_URL: ctx.sandbox.siteUrl, MKT_API_KEY: ctx.sandbox.seed.test_key };
  // An API key may manage only its own app; a developer token with apps:write manages every app they own.
  const token = await developerToken(ctx.sandbox, ['apps:write', 'identity:read']);
  asOwner = { MKT_SITE_URL: ctx.sandbox.siteUrl, MKT_ACCESS_TOKEN: token };
});

const mkt = (args: string[], env = asKey) => runMkt(args, ctx.dir, { env });

async function credentialsFile(): Promise<{ secrets: Record<string, string>; mode: number }> {
  const file = join(ctx.dir, 'credentials.json');
  return {
    secrets: JSON.parse(await readFile(file, 'utf8')) as Record<string, string>,
    mode: (await stat(file)).mode & 0o777,
  };
}

async function createApp(name: string): Promise<{ id: string; client_id: string; client_secret: string }> {
  const res = await mkt(
    ['apps', 'create', '--name', name, '--redirect-uri', 'http://127.0.0.1/cb', '--json'],
    asOwner,
  );
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout) as { id: string; client_id: string; client_secret: string };
}

describe('mkt apps list', () => {
  it('prints one tab-separated line per app when piped', async () => {
    const res = await mkt(['apps', 'list']);
    expect(res.code, res.stderr).toBe(0);
    const rows = res.stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.split('\t'));
    const seeded = rows.find((r) => r[0] === ctx.sandbox.seed.app.id);
    expect(seeded).toEqual([
      ctx.sandbox.seed.app.id,
      'Sandbox App',
      ctx.sandbox.seed.app.client_id,
      expect.any(String),
    ]);
    expect(rows.every((r) => r.length === 4)).toBe(true);
  });

  it('prints a JSON array of the API objects with --json, without secrets', async () => {
    const res = await mkt(['apps', 'list', '--json']);
    expect(res.code, res.stderr).toBe(0);
    const apps = JSON.parse(res.stdout) as Array<Record<string, unknown>>;
    expect(Array.isArray(apps)).toBe(true);
    expect(apps.find((a) => a.id === ctx.sandbox.seed.app.id)).toMatchObject({
      client_id: ctx.sandbox.seed.app.client_id,
      redirect_uris: ctx.sandbox.seed.app.redirect_uris,
    });
    expect(res.stdout).not.toContain(ctx.sandbox.seed.app.client_secret);
  });
});

describe('mkt apps create / get / update / delete', () => {
  it('shows the client secret once on stdout and stores it for mkt login in a 0600 file', async () => {
    const res = await mkt(
      [
        'apps',
        'create',
        '--name',
        'Acme CRM',
        '--redirect-uri',
        'https://acme.example/cb',
        '--redirect-uri',
        'http://[::1]:8080/cb',
      ],
      asOwner,
    );
    expect(res.code, res.stderr).toBe(0);
    const secret = /client secret:\s+(cs_\S+)/.exec(res.stdout)?.[1];
    const clientId = /client id:\s+(\S+)/.exec(res.stdout)?.[1];
    expect(secret).toBeDefined();
    expect(res.stderr).toMatch(/shown only this once/);
    expect(res.stderr).not.toContain(secret);
    const { secrets, mode } = await credentialsFile();
    expect(secrets[`site:${ctx.sandbox.siteUrl}:client-secret:${clientId}`]).toBe(secret);
    expect(mode).toBe(0o600);
  });

  it('gets, updates and deletes an app by --app, confirming with --yes', async () => {
    const app = await createApp('To Change');
    const got = await mkt(['apps', 'get', '--app', app.id, '--json'], asOwner);
    expect(JSON.parse(got.stdout)).toMatchObject({
      id: app.id,
      name: 'To Change',
      redirect_uris: ['http://127.0.0.1/cb'],
    });
    expect(got.stdout).not.toContain('client_secret');

    const updated = await mkt(
      [
        'apps',
        'update',
        '--app',
        app.id,
        '--name',
        'Changed',
        '--webhook-url',
        'http://localhost:3000/hooks',
        '--json',
      ],
      asOwner,
    );
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({
      name: 'Changed',
      webhook_url: 'http://localhost:3000/hooks',
    });
    const cleared = await mkt(['apps', 'update', '--app', app.id, '--webhook-url', '', '--json'], asOwner);
    expect(JSON.parse(cleared.stdout)).toMatchObject({ webhook_url: null, name: 'Changed' });

    const refused = await mkt(['apps', 'delete', '--app', app.id, '--json'], asOwner);
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stdout).error.code).toBe('confirmation_required');
    expect((await mkt(['apps', 'get', '--app', app.id], asOwner)).code).toBe(0);

    const deleted = await mkt(['apps', 'delete', '--app', app.id, '--yes'], asOwner);
    expect(deleted.code, deleted.stderr).toBe(0);
    const gone = await mkt(['apps', 'get', '--app', app.id], asOwner);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(`No app with id "${app.id}"`);
  });

  it('asks on a terminal before deleting: "n" keeps the app, "y" deletes it', async () => {
    const app = await createApp('Terminal Delete');
    const no = await runMktInTty(['apps', 'delete', '--app', app.id], ctx.dir, {
      env: asOwner,
      waitFor: 'Delete app',
      answer: 'n\r',
    });
    expect(no.stdout).toContain(`Delete app ${app.id}`);
    // Declining is not a failure to report: the answer, a plain "Nothing was changed.", exit 1.
    expect(no.stdout).toContain('Nothing was changed.');
    expect(no.stdout).not.toContain('Error');
    expect(no.code).toBe(1);
    expect((await mkt(['apps', 'get', '--app', app.id], asOwner)).code).toBe(0);

    const yes = await runMktInTty(['apps', 'delete', '--app', app.id], ctx.dir, {
      env: asOwner,
      waitFor: 'Delete app',
      answer: 'y\r',
    });
    expect(yes.code, yes.stdout).toBe(0);
    expect((await mkt(['apps', 'get', '--app', app.id], asOwner)).code).toBe(1);
  });
});

describe('mkt apps use', () => {
  it('refuses an app that does not exist and keeps the setting unchanged', async () => {
    const res = await mkt(['apps', 'use', 'app_doesnotexist']);
    expect(res.code).toBe(1);
    const setting = await mkt(['config', 'get', 'app']);
    expect(setting.stdout).not.toContain('app_doesnotexist');
  });

  it('stores the default app, which commands then use without --app', async () => {
    const res = await mkt(['apps', 'use', ctx.sandbox.seed.app.id]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(ctx.sandbox.seed.app.id);
    const config = JSON.parse(await readFile(join(ctx.dir, 'config.json'), 'utf8')) as {
      profiles: Record<string, Record<string, string>>;
    };
    expect(config.profiles.default?.app).toBe(ctx.sandbox.seed.app.id);
    const got = await mkt(['apps', 'get', '--json']);
    expect(JSON.parse(got.stdout).id).toBe(ctx.sandbox.seed.app.id);
  });
});

describe('mkt apps rotate-secret', () => {
  it('rotates the client secret, prints it once and stores it under the client id', async () => {
    const app = await createApp('Rotate Client');
    const res = await mkt(['apps', 'rotate-secret', '--app', app.id, '--kind', 'client', '--yes'], asOwner);
    expect(res.code, res.stderr).toBe(0);
    const secret = res.stdout.trim();
    expect(secret).toMatch(/^cs_\S+$/);
    expect(secret).not.toBe(app.client_secret);
    const { secrets, mode } = await credentialsFile();
    expect(secrets[`site:${ctx.sandbox.siteUrl}:client-secret:${app.client_id}`]).toBe(secret);
    expect(mode).toBe(0o600);
  });

  it('rotates the webhook secret and stores what the server now signs with', async () => {
    const res = await mkt([
      'apps',
      'rotate-secret',
      '--app',
      ctx.sandbox.seed.app.id,
      '--kind',
      'webhook',
      '--yes',
    ]);
    expect(res.code, res.stderr).toBe(0);
    const secret = res.stdout.trim();
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(ctx.sandbox.seed.app.webhook_secret);
    const server = await fetch(
      `${ctx.sandbox.siteUrl}/api/v1/apps/${ctx.sandbox.seed.app.id}/webhook-secret`,
      {
        headers: { 'x-api-key': ctx.sandbox.seed.test_key },
      },
    );
    expect(((await server.json()) as { webhook_secret: string }).webhook_secret).toBe(secret);
    const { secrets } = await credentialsFile();
    expect(secrets[`default:webhook-secret:${ctx.sandbox.seed.app.id}`]).toBe(secret);
  });

  it('asks on a terminal and rotates nothing when the answer is no', async () => {
    const before = await fetch(
      `${ctx.sandbox.siteUrl}/api/v1/apps/${ctx.sandbox.seed.app.id}/webhook-secret`,
      {
        headers: { 'x-api-key': ctx.sandbox.seed.test_key },
      },
    ).then((r) => r.json());
    const res = await runMktInTty(
      ['apps', 'rotate-secret', '--kind', 'webhook', '--app', ctx.sandbox.seed.app.id],
      ctx.dir,
      {
        env: asKey,
        waitFor: 'Rotate the webhook',
        answer: 'n\r',
      },
    );
    expect(res.stdout).toContain('Nothing was changed.');
    expect(res.code).toBe(1);
    const after = await fetch(
      `${ctx.sandbox.siteUrl}/api/v1/apps/${ctx.sandbox.seed.app.id}/webhook-secret`,
      {
        headers: { 'x-api-key': ctx.sandbox.seed.test_key },
      },
    ).then((r) => r.json());
    expect(after).toEqual(before);
  });
});

describe('server refusals', () => {
  it('a token without apps:write gets exit 4 and the login command that fixes it', async () => {
    const token = await developerToken(ctx.sandbox, ['identity:read']);
    const res = await mkt(['apps', 'get', '--app', ctx.sandbox.seed.app.id], {
      MKT_SITE_URL: ctx.sandbox.siteUrl,
      MKT_ACCESS_TOKEN: token,
    });
    expect(res.code).toBe(4);
    expect(res.stderr).toContain('mkt login --scope apps:write');
  });
});

describe('bad input is refused before any request', () => {
  const cases: Array<[string, string[], RegExp]> = [
    [
      'a malformed redirect URI',
      ['apps', 'create', '--name', 'X', '--redirect-uri', 'not a url'],
      /not a URL/,
    ],
    [
      'plain http on a public host',
      ['apps', 'create', '--name', 'X', '--redirect-uri', 'http://example.com/cb'],
      /127\.0\.0\.1/,
    ],
    [
      'a non-http scheme',
      ['apps', 'create', '--name', 'X', '--redirect-uri', 'ftp://example.com/cb'],
      /https:/,
    ],
    [
      'a redirect URI with a fragment',
      ['apps', 'create', '--name', 'X', '--redirect-uri', 'https://a.example/cb#x'],
      /fragment/,
    ],
    ['a malformed webhook URL', ['apps', 'create', '--name', 'X', '--webhook-url', 'hooks'], /not a URL/],
    [
      'an embed URL that is not http',
      ['apps', 'update', '--app', 'app_x', '--embed-url', 'javascript:alert(1)'],
      /http/,
    ],
    ['an empty name', ['apps', 'create', '--name', ' '], /--name/],
    ['no --name, named as typed', ['apps', 'create'], /^Error: Missing required flag --name\.$/m],
    ['an update with nothing to change', ['apps', 'update', '--app', 'app_x'], /Nothing to change/],
    ['delete without --yes off a terminal', ['apps', 'delete', '--app', 'app_x'], /--yes/],
    [
      'rotate-secret without --yes off a terminal',
      ['apps', 'rotate-secret', '--app', 'app_x', '--kind', 'client'],
      /--yes/,
    ],
    [
      'an unknown secret kind',
      ['apps', 'rotate-secret', '--app', 'app_x', '--kind', 'both', '--yes'],
      /client, webhook/,
    ],
    ['an app id that is not one', ['apps', 'use', 'my-app'], /app_/],
  ];

  it.each(cases)('%s: exit 2, says what is accepted', async (_name, args, message) => {
    const cfg = await tempDir();
    try {
      await expectRefusedBeforeAnyRequest(args, cfg.path, message);
    } finally {
      await cfg.remove();
    }
  });

  it('the recording server does see a valid command (so the checks above can fail)', async () => {
    const server = await startRecordingServer();
    try {
      const res = await runMkt(
        ['apps', 'create', '--name', 'X', '--redirect-uri', 'http://localhost:9/cb'],
        ctx.dir,
        {
          env: { MKT_SITE_URL: server.url, MKT_API_KEY: 'test_counting' },
        },
      );
      expect(res.code).toBe(1);
      expect(server.seen.map((s) => `${s.method} ${s.url}`)).toEqual(['POST /api/v1/apps']);
    } finally {
      await server.close();
    }
  });
});
