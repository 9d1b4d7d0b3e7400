import { describe, expect, it } from 'vitest';
import { developerToken, useSandbox } from '../support/sandbox.js';
import { call } from './helpers.js';

// Short-lived tables are bounded per party, so that one party cannot evict another's: pending device
// codes and consent requests per app, preview passes per app; and user-code guesses are limited per
// client address (RFC 8628 §5.1).

const ctx = useSandbox({ sandboxPerTest: true });

/** A second app of the seeded developer, with its client secret and a test key. */
async function otherApp() {
  const token = await developerToken(ctx.sandbox, ['apps:write']);
  const app = await call(ctx.sandbox, 'POST', '/api/v1/apps', {
    token,
    body: { name: 'Noisy', redirect_uris: ['http://127.0.0.1/cb'] },
  });
  expect(app.status).toBe(201);
  const secret = await call(ctx.sandbox, 'POST', `/api/v1/apps/${app.json.id}/client-secret`, { token });
  const key = await call(ctx.sandbox, 'POST', `/api/v1/apps/${app.json.id}/keys`, {
    token,
    body: { mode: 'test' },
  });
  return {
    id: app.json.id as string,
    client_id: app.json.client_id as string,
    client_secret: secret.json.client_secret as string,
    key: key.json.key as string,
    token,
  };
}

const deviceAuthorization = (client: { client_id: string; client_secret: string }) =>
  fetch(`${ctx.sandbox.siteUrl}/api/oauth/device_authorization`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...client, scope: 'identity:read' }),
  });

const devicePage = (code: string) =>
  fetch(`${ctx.sandbox.siteUrl}/oauth/device?user_code=${encodeURIComponent(code)}`);

describe('device sign-in', () => {
  it('limits wrong user codes per client address with 429 and Retry-After', async () => {
    const { app } = ctx.sandbox.seed;
    const started = (await (await deviceAuthorization(app)).json()) as { user_code: string };
    const answers: number[] = [];
    for (let i = 0; i < 30; i++) answers.push((await devicePage('BBBB-BBBB')).status);
    expect(answers.slice(0, 10)).toEqual(Array(10).fill(200));
    expect(answers.slice(10)).toEqual(Array(20).fill(429));
    const refused = await devicePage(started.user_code);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(await refused.text()).toMatch(/Too many wrong codes/);
  });

  it("keeps an app's pending device code while another app starts 1,000", async () => {
    const noisy = await otherApp();
    const mine = (await (await deviceAuthorization(ctx.sandbox.seed.app)).json()) as { user_code: string };
    for (let i = 0; i < 1_000; i++) expect((await deviceAuthorization(noisy)).status).toBe(200);
    const page = await devicePage(mine.user_code);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(mine.user_code);
    expect(html).not.toMatch(/This code is unknown/);
    expect(html).toMatch(/value="approve"/);
  }, 60_000);
});

describe('consent requests and preview passes', () => {
  it("keeps an app's open consent page while another app's are opened 1,000 times", async () => {
    const noisy = await otherApp();
    const authorize = (clientId: string, redirect: string) =>
      fetch(
        `${ctx.sandbox.siteUrl}/oauth/authorize?${new URLSearchParams({
          client_id: clientId,
          redirect_uri: redirect,
          response_type: 'code',
          scope: 'identity:read',
        })}`,
      );
    const { app, users } = ctx.sandbox.seed;
    const page = await (await authorize(app.client_id, app.redirect_uris[0]!)).text();
    for (let i = 0; i < 1_000; i++) await (await authorize(noisy.client_id, 'http://127.0.0.1/cb')).text();
    const form = new URLSearchParams({ user_id: users[0]!.id, decision: 'approve' });
    for (const m of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g))
      form.set(m[1]!, m[2]!);
    const answer = await fetch(`${ctx.sandbox.siteUrl}/oauth/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ctx.sandbox.siteUrl },
      body: form,
      redirect: 'manual',
    });
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toMatch(/[?&]code=/);
  }, 60_000);

  it("keeps an app's preview pass while another app's links are made 1,000 times", async () => {
    const noisy = await otherApp();
    const user = ctx.sandbox.seed.users[0]!.id;
    const link = await call(ctx.sandbox, 'POST', `/api/v1/apps/${ctx.sandbox.seed.app.id}/preview-links`, {
      key: ctx.sandbox.seed.test_key,
      body: { user_id: user },
    });
    expect(link.status).toBe(201);
    await call(ctx.sandbox, 'PATCH', `/api/v1/apps/${ctx.sandbox.seed.app.id}`, {
      key: ctx.sandbox.seed.test_key,
      body: { embed_url: 'https://embed.example/app' },
    });
    const noisyUser = await call(ctx.sandbox, 'GET', `/api/v1/simulator/users?app_id=${noisy.id}`, {
      key: noisy.key,
    });
    const target = noisyUser.json.data[0]?.id ?? ctx.sandbox.seed.developer.id;
    // Two grants: one token's rate limit is 1,000 requests a minute.
    const tokens = [noisy.token, await developerToken(ctx.sandbox, ['apps:write'])];
    for (let i = 0; i < 1_000; i++) {
      const other = await call(ctx.sandbox, 'POST', `/api/v1/apps/${noisy.id}/preview-links`, {
        token: tokens[i % 2],
        body: { user_id: target },
      });
      expect(other.status).toBe(201);
    }
    expect(await (await fetch(link.json.url)).text()).toContain('id="app-frame"');
  }, 60_000);
});
