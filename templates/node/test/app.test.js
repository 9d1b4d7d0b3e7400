// @ts-check
// `npm test`: the app's own checks, and its sign-in against the marketplace. The settings come from
// the environment (`mkt sandbox exec -- npm test` gives a fresh sandbox's, seeded from
// mkt.fixtures.json), else from .env.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { SignJWT } from 'jose';
import { checkContextToken, redirectUri, settings, startSignIn } from '../src/marketplace.js';
import app from '../src/server.js';

/** @param {string} body */
const sign = (body) => `sha256=${createHmac('sha256', settings.webhookSecret).update(body).digest('hex')}`;
const delivery = (at = new Date()) =>
  JSON.stringify({ event: 'subscription.created', timestamp: at.toISOString(), data: {} });
/** @param {string} body @param {string} signature */
const post = (body, signature, id = 'dlv_test') =>
  app.request('/webhooks', {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'x-marketplace-signature': signature,
      'x-marketplace-delivery': id,
    },
  });

test('a delivery signed with the webhook secret is accepted, and again as a duplicate', async () => {
  const body = delivery();
  assert.equal((await post(body, sign(body))).status, 204);
  assert.equal((await post(body, sign(body))).status, 204);
});

test('a changed body, a wrong signature or a timestamp out of the 5-minute tolerance is refused', async () => {
  const body = delivery();
  assert.equal((await post(`${body} `, sign(body))).status, 401);
  assert.equal((await post(body, 'sha256=00')).status, 401);
  for (const at of [Date.now() - 360_000, Date.now() + 360_000]) {
    const stale = delivery(new Date(at));
    assert.equal((await post(stale, sign(stale))).status, 401);
  }
});

test('a context token from the marketplace names its user; one for another app is refused', async () => {
  const key = new TextEncoder().encode(settings.clientSecret);
  /** @param {string} aud */
  const token = (aud) =>
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
