import { createHash, randomBytes } from 'node:crypto';

/** A PKCE pair (RFC 7636, S256) and a random 128-bit `state` for one authorization request. */
export function newAuthorizationSecrets(): { verifier: string; challenge: string; state: string } {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier, 'ascii').digest('base64url');
  return { verifier, challenge, state: randomBytes(16).toString('base64url') };
}
