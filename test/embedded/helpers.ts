import { SignJWT } from 'jose';

/** Seconds since the epoch, now. */
export const nowS = () => Math.floor(Date.now() / 1000);

/** The claims of a context token for the seeded app, as the marketplace would make them. */
export function claimsFor(
  sandbox: {
    siteUrl: string;
    seed: { app: { id: string; client_id: string }; users: Array<{ id: string }> };
  },
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const iat = nowS();
  return {
    iss: sandbox.siteUrl,
    aud: sandbox.seed.app.client_id,
    sub: sandbox.seed.users[0]!.id,
    app_id: sandbox.seed.app.id,
    iat,
    nbf: iat,
    exp: iat + 300,
    jti: 'jti-test',
    ...overrides,
  };
}

/** A JWT made by jose (another implementation than ours) with exactly these claims. */
export function joseToken(secret: string, claims: Record<string, unknown>, alg = 'HS256'): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT' }).sign(new TextEncoder().encode(secret));
}

/** An unsigned token (`"alg": "none"`), as an attacker would send it. */
export function unsignedToken(claims: Record<string, unknown>): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`;
}
