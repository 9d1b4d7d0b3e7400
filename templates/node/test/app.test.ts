// Run with `npm test` (reads .env): the app's own checks, and its sign-in against the marketplace.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { SignJWT } from 'jose';
import { checkContextToken, checkWebhook, redirectUri, settings, startSignIn } from '../src/marketplace.ts';

const sign = (body: string) =>
  `sha256=${createHmac('sha256', settings.webhookSecret).update(body).digest('hex')}`;
const delivery = (at = new Date()) =>
  JSON.stringify({ event: 'subscription.created', timestamp: at.toISOString(), data: {} });

test('a delivery signed with the webhook secret is accepted', () => {
  const body = delivery();
  assert.equal(checkWebhook(Buffer.from(body), sign(body)).ok, true);
});

test('a changed body, a wrong signature or an old timestamp is refused', () => {
  const body = delivery();
  assert.deepEqual(checkWebhook(Buffer.from(`${body} `), sign(body)), { ok: false, reason: 'bad signature' });
  assert.deepEqual(checkWebhook(Buffer.from(body), 'sha256=00'), { ok: false, reason: 'bad signature' });
  const old = delivery(new Date(Date.now() - 3600_000));
  assert.deepEqual(checkWebhook(Buffer.from(old), sign(old)), {
    ok: false,
    reason: 'timestamp outside the tolerance',
  });
});

test('a context token from the marketplace names its user; one for another app is refused', async () => {
  const key = new TextEncoder().encode(settings.clientSecret);
  const token = (aud: string) =>
    new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(settings.siteUrl)
      .setAudience(aud)
      .setSubject('usr_1')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(key);
  assert.equal(await checkContextToken(await token(settings.clientId)), 'usr_1');
  await assert.rejects(checkContextToken(await token('cid_other')));
});

test("the marketplace's consent page takes the app's sign-in request", async () => {
  const { url } = await startSignIn();
  assert.equal(new URL(url).searchParams.get('redirect_uri'), redirectUri);
  const res = await fetch(url);
  assert.equal(res.status, 200, await res.text());
});
