import * as oauth from 'oauth4webapi';
import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { startTestSandbox } from '../support/sandbox.js';
import { call, fakeClock, submitConsent } from './helpers.js';
import { answerWith, startServer, type TestServer } from '../support/server.js';

const REDIRECT = 'http://127.0.0.1:54321/callback';
let sb: Sandbox;
let receiver: TestServer | undefined;

afterEach(async () => {
  await sb?.close();
  await receiver?.close();
  receiver = undefined;
});

function server(tokenPath: string): oauth.AuthorizationServer {
  return {
    issuer: sb.siteUrl,
    authorization_endpoint: `${sb.siteUrl}/oauth/authorize`,
    token_endpoint: `${sb.siteUrl}${tokenPath}`,
  };
}

const insecure = { [oauth.allowInsecureRequests]: true };

/** Runs consent over HTTP and returns the callback URL plus the PKCE verifier and state. */
async function approve(scope = 'identity:read entitlements:read', redirectUri = REDIRECT) {
  const verifier = oauth.generateRandomCodeVerifier();
  const challenge = await oauth.calculatePKCECodeChallenge(verifier);
  const state = oauth.generateRandomState();
  const consent = await submitConsent(sb, {
    client_id: sb.seed.app.client_id,
    redirect_uri: redirectUri,
    scope,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    user_id: sb.seed.users[0]!.id,
  });
  expect(consent.page).toContain('Sandbox App');
  expect(consent.page).toContain('<select name="user_id"');
  expect(consent.status).toBe(302);
  return { callback: consent.location!, verifier, state };
}

describe('OAuth with a standard client library (oauth4webapi)', () => {
  for (const tokenPath of ['/api/oauth/token', '/api/v1/oauth/token']) {
    it(`completes Authorization Code + PKCE at ${tokenPath}`, async () => {
      sb = await startTestSandbox();
      const as = server(tokenPath);
      const client: oauth.Client = { client_id: sb.seed.app.client_id };
      const { callback, verifier, state } = await approve();
      expect(callback.searchParams.get('state')).toBe(state);
      const params = oauth.validateAuthResponse(as, client, callback, state);
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.ClientSecretPost(sb.seed.app.client_secret),
        params,
        REDIRECT,
        verifier,
        insecure,
      );
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
      expect(tokens.access_token).toMatch(/^at_/);
      expect(tokens.refresh_token).toMatch(/^rt_/);
      expect(tokens.token_type).toBe('bearer');
      expect(tokens.expires_in).toBe(3600);
      expect(tokens.scope).toBe('identity:read entitlements:read');

      const me = await call(sb, 'GET', '/api/v1/whoami', { token: tokens.access_token });
      expect(me.status).toBe(200);
      expect(me.json).toEqual({
        id: sb.seed.users[0]!.id,
        email: 'ada@sandbox.test',
        name: 'Ada Active',
        avatar_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/avatars\//),
      });
      const ent = await call(sb, 'GET', '/api/v1/entitlements', { token: tokens.access_token });
      expect(ent.status).toBe(200);
      expect(ent.json).toMatchObject({
        user_id: sb.seed.users[0]!.id,
        app_id: sb.seed.app.id,
        plan: 'pro-monthly',
      });
    });
  }

  it('rotates refresh tokens with HTTP Basic client auth; a spent refresh token is accepted once more, then invalid_grant', async () => {
    sb = await startTestSandbox();
    const as = server('/api/oauth/token');
    const client: oauth.Client = { client_id: sb.seed.app.client_id };
    const auth = oauth.ClientSecretBasic(sb.seed.app.client_secret);
    const { callback, verifier, state } = await approve();
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const first = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT, verifier, insecure),
    );
    const second = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, first.refresh_token!, insecure),
    );
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await call(sb, 'GET', '/api/v1/whoami', { token: second.access_token })).status).toBe(200);

    const replay = () =>
      call(sb, 'POST', '/api/oauth/token', {
        body: {
          grant_type: 'refresh_token',
          refresh_token: first.refresh_token,
          client_id: sb.seed.app.client_id,
          client_secret: sb.seed.app.client_secret,
        },
      });
    // Within the reuse interval the spent token is accepted once more, answering the same pair.
    const retry = await replay();
    expect([retry.json.access_token, retry.json.refresh_token]).toEqual([
      second.access_token,
      second.refresh_token,
    ]);
    const reuse = await replay();
    expect(reuse.status).toBe(400);
    expect(reuse.json).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
    // Reuse of a rotated token ends the whole grant.
    expect((await call(sb, 'GET', '/api/v1/whoami', { token: second.access_token })).status).toBe(401);
  });
});

describe('token endpoint rules', () => {
  async function exchange(body: Record<string, string>, form = false, path = '/api/oauth/token') {
    if (form) {
      return call(sb, 'POST', path, {
        rawBody: new URLSearchParams(body).toString(),
        contentType: 'application/x-www-form-urlencoded',
      });
    }
    return call(sb, 'POST', path, { body });
  }
  const grant = (code: string, verifier: string, extra: Record<string, string> = {}) => ({
    grant_type: 'authorization_code',
    code,
    client_id: sb.seed.app.client_id,
    client_secret: sb.seed.app.client_secret,
    redirect_uri: REDIRECT,
    code_verifier: verifier,
    ...extra,
  });

  it('accepts a form-encoded body at /api/v1/oauth/token and refuses a reused code', async () => {
    sb = await startTestSandbox();
    const { callback, verifier } = await approve();
    const code = callback.searchParams.get('code')!;
    const ok = await exchange(grant(code, verifier), true, '/api/v1/oauth/token');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('cache-control')).toBe('no-store');
    expect(ok.json).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    const again = await exchange(grant(code, verifier), true);
    expect(again.status).toBe(400);
    expect(again.json.error).toBe('invalid_grant');
    // RFC 6749 4.1.2: tokens from a replayed code are revoked.
    expect((await call(sb, 'GET', '/api/v1/whoami', { token: ok.json.access_token })).status).toBe(401);
  });

  it('expires codes after 60 seconds of the sandbox clock', async () => {
    const clock = fakeClock();
    sb = await startTestSandbox({ now: clock.now });
    const fresh = await approve();
    clock.advance(59_000);
    expect((await exchange(grant(fresh.callback.searchParams.get('code')!, fresh.verifier))).status).toBe(
      200,
    );
    const stale = await approve();
    clock.advance(60_001);
    const late = await exchange(grant(stale.callback.searchParams.get('code')!, stale.verifier));
    expect(late.status).toBe(400);
    expect(late.json).toMatchObject({
      error: 'invalid_grant',
      error_description: expect.stringContaining('expired'),
    });
  });

  it('binds the code to redirect_uri and client, and verifies PKCE', async () => {
    sb = await startTestSandbox();
    const a = await approve();
    const code = a.callback.searchParams.get('code')!;
    const wrongRedirect = await exchange(
      grant(code, a.verifier, { redirect_uri: 'http://127.0.0.1:9/callback' }),
    );
    expect(wrongRedirect.json.error).toBe('invalid_grant');
    const wrongVerifier = await exchange(grant(code, oauth.generateRandomCodeVerifier()));
    expect(wrongVerifier.status).toBe(400);
    expect(wrongVerifier.json).toMatchObject({
      error: 'invalid_grant',
      error_description: expect.stringContaining('code_verifier'),
    });
    const { code_verifier: _dropped, ...withoutVerifier } = grant(code, a.verifier);
    const noVerifier = await exchange(withoutVerifier);
    expect(noVerifier.json).toMatchObject({
      error: 'invalid_grant',
      error_description: expect.stringContaining('missing'),
    });
    const badSecret = await exchange(grant(code, a.verifier, { client_secret: 'cs_wrong' }));
    expect(badSecret.status).toBe(401);
    expect(badSecret.json.error).toBe('invalid_client');
    // None of the failures spent the code.
    expect((await exchange(grant(code, a.verifier))).status).toBe(200);
  });

  it('answers RFC 6749 errors for malformed requests', async () => {
    sb = await startTestSandbox();
    const cases: Array<[Answer: Promise<{ status: number; json: { error: string } }>, number, string]> = [
      [exchange({ grant_type: 'password' }), 400, 'unsupported_grant_type'],
      [exchange({ code: 'x' }), 400, 'invalid_request'],
      [
        call(sb, 'POST', '/api/oauth/token', { rawBody: '{nope', contentType: 'application/json' }),
        400,
        'invalid_request',
      ],
      [
        call(sb, 'POST', '/api/oauth/token', { rawBody: 'x', contentType: 'text/plain' }),
        415,
        'invalid_request',
      ],
      [call(sb, 'POST', '/api/oauth/token', { body: { grant_type: 1 } }), 400, 'invalid_request'],
      [
        call(sb, 'POST', '/api/oauth/token', {
          rawBody: 'grant_type=refresh_token&refresh_token=a&refresh_token=b',
          contentType: 'application/x-www-form-urlencoded',
        }),
        400,
        'invalid_request',
      ],
      [
        exchange({
          grant_type: 'authorization_code',
          code: 'c',
          redirect_uri: REDIRECT,
          client_id: 'cid_nobody',
          client_secret: 's',
        }),
        401,
        'invalid_client',
      ],
      [exchange(grant('code_unknown', 'v'.repeat(43))), 400, 'invalid_grant'],
    ];
    for (const [pending, status, error] of cases) {
      const answer = await pending;
      expect({ status: answer.status, error: answer.json.error }).toEqual({ status, error });
    }
  });
});

describe('consent page', () => {
  it('shows request errors on the page with 400 and never redirects', async () => {
    sb = await startTestSandbox();
    const base = {
      client_id: sb.seed.app.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'identity:read',
    };
    const cases: Array<[Record<string, string>, string]> = [
      [{ ...base, client_id: 'cid_unknown' }, 'invalid_client'],
      [{ ...base, redirect_uri: 'http://evil.example/callback' }, 'invalid_redirect_uri'],
      [{ ...base, redirect_uri: 'http://127.0.0.1:5000/other' }, 'invalid_redirect_uri'],
      [{ ...base, response_type: 'token' }, 'unsupported_response_type'],
      [{ ...base, scope: 'admin:all' }, 'invalid_scope'],
      [{ ...base, code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' }, 'invalid_request'],
      [{ redirect_uri: REDIRECT, response_type: 'code' }, 'invalid_request'],
      [{ client_id: sb.seed.app.client_id, response_type: 'code' }, 'invalid_request'],
      [{ client_id: sb.seed.app.client_id, redirect_uri: REDIRECT }, 'invalid_request'],
    ];
    for (const [params, code] of cases) {
      const res = await fetch(`${sb.siteUrl}/oauth/authorize?${new URLSearchParams(params)}`, {
        redirect: 'manual',
      });
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(await res.text()).toContain(`<strong id="error-code">${code}</strong>`);
    }
  });

  it('redirects with error=access_denied on deny, and escapes HTML', async () => {
    sb = await startTestSandbox();
    const renamed = await call(sb, 'PATCH', `/api/v1/apps/${sb.seed.app.id}`, {
      key: sb.seed.test_key,
      body: { name: '<script>alert("x")</script>' },
    });
    expect(renamed.status).toBe(200);
    const page = await fetch(
      `${sb.siteUrl}/oauth/authorize?` +
        new URLSearchParams({
          client_id: sb.seed.app.client_id,
          redirect_uri: REDIRECT,
          response_type: 'code',
          state: '"><b>s',
        }),
    );
    const html = await page.text();
    expect(html).not.toContain('<script>alert');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(html).not.toContain('<b>s');
    const denied = await submitConsent(sb, {
      client_id: sb.seed.app.client_id,
      redirect_uri: REDIRECT,
      state: 'st',
      decision: 'deny',
    });
    expect(denied.page).toContain('&lt;script&gt;');
    expect(denied.status).toBe(302);
    expect(denied.location!.searchParams.get('error')).toBe('access_denied');
    expect(denied.location!.searchParams.get('state')).toBe('st');
    expect(denied.location!.searchParams.get('code')).toBeNull();
  });

  it('emits user.authorized when a user approves', async () => {
    receiver = await startServer(answerWith(200));
    sb = await startTestSandbox();
    await call(sb, 'PATCH', `/api/v1/apps/${sb.seed.app.id}`, {
      key: sb.seed.test_key,
      body: { webhook_url: receiver.url },
    });
    await approve('identity:read');
    const [hit] = await receiver.waitFor(1);
    expect(JSON.parse(hit!.body)).toMatchObject({
      event: 'user.authorized',
      data: { user_id: sb.seed.users[0]!.id, app_id: sb.seed.app.id, scopes: ['identity:read'] },
    });
  });
});
