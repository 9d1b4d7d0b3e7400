import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runMkt } from '../support/cli.js';
import { runMktInTty } from '../support/terminal.js';
import { useSandbox } from '../support/sandbox.js';
import { browserCommand, PERSON, readLog, storedSecrets, storedToken } from './helpers.js';

// `mkt login` on a real pseudo-terminal (util-linux `script`): the secrets it asks for are typed
// into masked prompts, so the terminal transcript (everything echoed and printed) never shows them.

const ctx = useSandbox({ dirPerTest: true });

const CTRL_C = '\u0003';
const CTRL_D = '\u0004'; // EOF on a terminal

/** What the person saw, as one line: control sequences gone, and lines the prompt wrapped at 80 columns joined. */
const screen = (transcript: string) => stripVTControlCharacters(transcript).replace(/\r?\n/g, '');

/** The profile's settings, or undefined when nothing was ever written. */
async function profileConfig(): Promise<Record<string, string> | undefined> {
  try {
    const config = JSON.parse(await readFile(join(ctx.dir, 'config.json'), 'utf8'));
    return config.profiles?.default;
  } catch {
    return undefined;
  }
}

describe('mkt login --with-api-key on a terminal', () => {
  it('reads the key from a masked prompt, stores it, and auth status uses it', async () => {
    const key = ctx.sandbox.seed.test_key;
    const env = { MKT_SITE_URL: ctx.sandbox.siteUrl };
    const res = await runMktInTty(['login', '--with-api-key'], ctx.dir, {
      env,
      waitFor: 'API key',
      answer: `${key}\r`,
      timeoutMs: 30_000,
    });
    expect(res.code, res.stdout).toBe(0);
    expect(screen(res.stdout)).toMatch(new RegExp(`✔ API key \\*{${key.length}}(?!\\*)`));
    expect(res.stdout).not.toContain(key);
    expect(res.stdout).toContain(`✓ Logged in as ${ctx.sandbox.seed.developer.name}`);
    expect(res.stdout).toContain('with a test key');
    expect(JSON.parse((await storedSecrets(ctx.dir))['default:api-key']!).key).toBe(key);

    const status = await runMkt(['auth', 'status', '--json'], ctx.dir, { env });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      kind: 'test_key',
      source: 'file',
      user: { id: ctx.sandbox.seed.developer.id },
    });
  }, 60_000);

  it.each([
    ['Ctrl-C', CTRL_C],
    ['EOF (Ctrl-D)', CTRL_D],
  ])(
    '%s at the prompt exits 130 and stores nothing',
    async (_name, answer) => {
      const res = await runMktInTty(['login', '--with-api-key'], ctx.dir, {
        env: { MKT_SITE_URL: ctx.sandbox.siteUrl },
        waitFor: 'API key',
        answer,
        timeoutMs: 30_000,
      });
      expect(res.code, res.stdout).toBe(130);
      expect(res.stdout).toContain('Interrupted');
      expect(await storedSecrets(ctx.dir)).toEqual({});
      expect(await profileConfig()).toBeUndefined();
    },
    60_000,
  );
});

describe('mkt login --client-id on a terminal without MKT_CLIENT_SECRET', () => {
  const env = () => ({
    MKT_SITE_URL: ctx.sandbox.siteUrl,
    MKT_BROWSER: browserCommand(PERSON),
    PERSON_LOG: join(ctx.dir, 'person.log'),
  });

  it('asks for the client secret with a masked prompt, signs in, and keeps the secret for next time', async () => {
    const { client_id: clientId, client_secret: secret } = ctx.sandbox.seed.app;
    const ada = ctx.sandbox.seed.users[0]!;
    const res = await runMktInTty(['login', '--client-id', clientId], ctx.dir, {
      env: { ...env(), PERSON_USER: ada.id },
      waitFor: `Client secret of ${clientId}`,
      answer: `${secret}\r`,
      timeoutMs: 30_000,
    });
    expect(res.code, res.stdout).toBe(0);
    expect(screen(res.stdout)).toMatch(
      new RegExp(`✔ Client secret of ${clientId} \\*{${secret.length}}(?!\\*)`),
    );
    expect(res.stdout).not.toContain(secret);
    expect(res.stdout).toContain(`✓ Logged in as ${ada.name} <${ada.email}> (${ada.id})`);
    expect(await readLog(env().PERSON_LOG, /^callback /)).toContain('callback 200 signed-in');
    expect((await storedToken(ctx.dir))?.user).toMatchObject({ id: ada.id });
    expect((await storedSecrets(ctx.dir))[`site:${ctx.sandbox.siteUrl}:client-secret:${clientId}`]).toBe(
      secret,
    );

    // The stored secret serves the next sign-in, which then needs no terminal.
    const again = await runMkt(['login'], ctx.dir, { env: env(), timeoutMs: 20_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('✓ Logged in as');
  }, 60_000);

  it.each([
    ['Ctrl-C', CTRL_C],
    ['EOF (Ctrl-D)', CTRL_D],
  ])(
    '%s at the prompt exits 130, opens no browser and stores nothing',
    async (_name, answer) => {
      const clientId = ctx.sandbox.seed.app.client_id;
      const res = await runMktInTty(['login', '--client-id', clientId], ctx.dir, {
        env: env(),
        waitFor: `Client secret of ${clientId}`,
        answer,
        timeoutMs: 30_000,
      });
      expect(res.code, res.stdout).toBe(130);
      expect(res.stdout).toContain('Interrupted');
      expect(await readLog(env().PERSON_LOG)).toEqual([]);
      expect(await storedSecrets(ctx.dir)).toEqual({});
      expect(await profileConfig()).toBeUndefined();
    },
    60_000,
  );
});
