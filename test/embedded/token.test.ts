import { jwtVerify, decodeProtectedHeader } from 'jose';
import { describe, expect, it } from 'vitest';
import { CONTEXT_TOKEN_TTL_S, signContextToken, verifyContextToken } from '../../src/wire/context-token.js';
import { joseToken, nowS, unsignedToken } from './helpers.js';

const secret = 'cs_test_secret_for_the_wire';
const site = 'http://127.0.0.1:7878';
const who = { iss: site, aud: 'cli_abc', sub: 'usr_1', app_id: 'app_1' };
const expect_ = (now = nowS()) => ({ secret, issuer: site, audience: 'cli_abc', nowS: now });

describe('the context token is a standard JWT', () => {
  it('jose verifies a token we sign (HS256, iss, aud, sub, app_id, iat, nbf, exp = iat + 300, jti)', async () => {
    const token = signContextToken(secret, who, nowS());
    const { payload, protectedHeader } = await jwtVerify(token, new TextEncoder().encode(secret), {
      algorithms: ['HS256'],
      issuer: site,
      audience: 'cli_abc',
    });
    expect(protectedHeader).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(payload).toMatchObject({ ...who, nbf: payload.iat });
    expect(payload.exp! - payload.iat!).toBe(CONTEXT_TOKEN_TTL_S);
    expect(payload.jti).toMatch(/^[\w-]{16,}$/);
    expect(signContextToken(secret, who, nowS())).not.toBe(token); // a fresh jti each time
  });

  it('jose refuses our token with another secret, and once it has expired', async () => {
    const token = signContextToken(secret, who, nowS() - 301);
    await expect(jwtVerify(token, new TextEncoder().encode(secret))).rejects.toThrow(/exp/);
    const fresh = signContextToken(secret, who, nowS());
    await expect(jwtVerify(fresh, new TextEncoder().encode('another'))).rejects.toThrow(/signature/);
  });

  it('our verifier accepts a token jose made', async () => {
    const iat = nowS();
    const token = await joseToken(secret, { ...who, iat, nbf: iat, exp: iat + 300, jti: 'j1' });
    expect(decodeProtectedHeader(token).alg).toBe('HS256');
    const result = verifyContextToken(token, expect_());
    expect(result).toMatchObject({ ok: true, claims: { sub: 'usr_1', app_id: 'app_1', jti: 'j1' } });
  });

  it('says how far a token is past exp or before nbf', () => {
    const now = nowS();
    const old = signContextToken(secret, who, now - 300 - 125);
    expect(verifyContextToken(old, expect_(now))).toMatchObject({
      ok: false,
      reason: 'expired',
      seconds: 125,
      message: expect.stringContaining('expired 2 min 5 s ago'),
    });
    expect(verifyContextToken(old, { ...expect_(now), toleranceS: 130 }).ok).toBe(true);
    const early = signContextToken(secret, who, now + 90);
    expect(verifyContextToken(early, expect_(now))).toMatchObject({
      reason: 'not_yet_valid',
      seconds: 90,
      message: expect.stringContaining('not valid for another 1 min 30 s'),
    });
  });

  it('refuses "alg": "none" even when every claim is right', () => {
    const now = nowS();
    const token = unsignedToken({ ...who, iat: now, nbf: now, exp: now + 300, jti: 'x' });
    expect(verifyContextToken(token, expect_(now))).toMatchObject({ reason: 'wrong_algorithm' });
  });

  it('checks the issuer regardless of a trailing slash, and the audience exactly', () => {
    const token = signContextToken(secret, who, nowS());
    expect(verifyContextToken(token, { ...expect_(), issuer: `${site}/` }).ok).toBe(true);
    expect(verifyContextToken(token, { ...expect_(), audience: 'cli_other' })).toMatchObject({
      reason: 'wrong_audience',
    });
  });
});
