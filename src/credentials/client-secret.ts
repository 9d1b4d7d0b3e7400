import { accounts } from './accounts.js';
import type { CredentialStore } from './store.js';

/**
 * The stored client secret of `clientId` on `siteUrl`: kept once per site, so every profile of the
 * site finds it; a secret stored the old way (per profile) is still found, and copied to the site's name
 * (the old entry stays: the profile may have used it on another site).
 */
export async function storedClientSecret(
  store: CredentialStore,
  where: { siteUrl: string; profile: string },
  clientId: string,
): Promise<string | null> {
  const name = accounts.clientSecret(where.siteUrl, clientId);
  const secret = await store.get(name);
  if (secret !== null) return secret;
  const legacy = await store.get(accounts.legacyClientSecret(where.profile, clientId));
  if (legacy === null) return null;
  await store.set(name, legacy);
  return legacy;
}
