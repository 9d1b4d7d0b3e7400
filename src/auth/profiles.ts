import type { CredentialStore } from '../credentials/store.js';

/**
 * The credential store cannot list its entries, so `mkt logout --all` reads this index of profiles
 * that stored a sign-in. (Profile names have no ":", so it never collides with a profile's entries.)
 */
const INDEX = 'signed-in-profiles';

/** The profiles that stored a token or key, as far as the index knows. */
export async function signedInProfiles(store: CredentialStore): Promise<string[]> {
  try {
    const list: unknown = JSON.parse((await store.get(INDEX)) ?? '[]');
    return Array.isArray(list) ? list.filter((p): p is string => typeof p === 'string') : [];
  } catch {
    return [];
  }
}

/** Adds or removes a profile in the index. */
export async function markSignedIn(
  store: CredentialStore,
  profile: string,
  signedIn: boolean,
): Promise<void> {
  const list = new Set(await signedInProfiles(store));
  if (list.has(profile) === signedIn) return;
  if (signedIn) list.add(profile);
  else list.delete(profile);
  if (list.size) await store.set(INDEX, JSON.stringify([...list]));
  else await store.delete(INDEX);
}
