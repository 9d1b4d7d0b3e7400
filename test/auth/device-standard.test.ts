import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMkt, startMkt, tempDir, type RunningMkt } from '../support/cli.js';
import { storedSecrets, storedToken } from './helpers.js';
import { answerOidcDevice, DEVICE_PROMPT, fastClock } from './device-helpers.js';
import { type OAuthServer, startOidcProvider, USER_ID } from './oauth-servers.js';

// `mkt login --device` against `oidc-provider` with its device flow enabled: a server nobody here
// wrote, found through its OpenID metadata, its verification pages answered as a person would
// (the code, then confirm or abort). mkt's clock runs faster (libfaketime), so its 5 s polls come
// half a second apart; the provider's codes live 60 s, or 2 s where expiry is the point.

let dir: { path: string; remove(): Promise<void> };
let server: OAuthServer | undefined;
let mkt: RunningMkt | undefined;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  mkt?.child.kill('SIGKILL');
  mkt = undefined;
  await server?.close();
  server = undefined;
  await dir.remove();
});

function deviceLogin(speed = 10) {
  mkt = startMkt(['login', '--device', '--client-id', server!.clientId], dir.path, {
    env: { MKT_SITE_URL: server!.siteUrl, MKT_CLIENT_SECRET: server!.clientSecret, ...fastClock(speed) },
    timeoutMs: 60_000,
  });
  return mkt;
}

describe('mkt login --device against oidc-provider', () => {
  it('signs in once the person confirms the code, then uses the token', async () => {
    server = await startOidcProvider({ deviceCodeTTL: 60 });
    const m = deviceLogin();
    const [, url] = await m.waitForStderr(DEVICE_PROMPT);
    expect(url).toMatch(new RegExp(`^${server.siteUrl}/device\\?user_code=`));
    expect(await answerOidcDevice(url!, 'approve')).toContain('Sign-in Success');
    expect((await m.exit()).code, m.stderr()).toBe(0);
    expect(m.stderr()).toContain(`✓ Logged in as Stan <std@example.com> (${USER_ID})`);
    expect((await storedToken(dir.path))?.refresh_token).toBeTruthy();
    const who = await runMkt(['whoami', '--json'], dir.path, { env: { MKT_SITE_URL: server.siteUrl } });
    expect(JSON.parse(who.stdout)).toMatchObject({ id: USER_ID });
  });

  it('an aborted confirmation is access_denied: exit 4, nothing stored', async () => {
    server = await startOidcProvider({ deviceCodeTTL: 60 });
    const m = deviceLogin();
    const [, url] = await m.waitForStderr(DEVICE_PROMPT);
    await answerOidcDevice(url!, 'deny');
    expect((await m.exit()).code).toBe(4);
    expect(m.stderr()).toContain('The sign-in was denied on the verification page');
    expect((await storedSecrets(dir.path))['default:oauth']).toBeUndefined();
  });

  it('a code nobody confirms expires: exit 4 with the command to start again', async () => {
    server = await startOidcProvider({ deviceCodeTTL: 2 });
    // At 2x, mkt's first poll comes 2.5 s after the code was issued: the provider answers expired_token.
    const m = deviceLogin(2);
    await m.waitForStderr(DEVICE_PROMPT);
    expect((await m.exit()).code).toBe(4);
    expect(m.stderr()).toContain('Nobody entered the code in time');
    expect(m.stderr()).toContain('Try: mkt login --device');
    expect(server.tokenRequests.at(-1)).toMatchObject({ status: 400 });
  });

  it('slow_down from the deployment: mkt polls 5 s less often, and still signs in', async () => {
    server = await startOidcProvider({ deviceCodeTTL: 60, slowDownOnce: true });
    const m = deviceLogin();
    const [, url] = await m.waitForStderr(DEVICE_PROMPT);
    await m.waitForStderr(/ask less often: every 10 s now/);
    await answerOidcDevice(url!, 'approve');
    expect((await m.exit()).code, m.stderr()).toBe(0);
  });
});
