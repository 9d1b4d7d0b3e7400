/** Names of the secrets mkt keeps in the credential store (service "mkt"). */
export const accounts = {
  /** JSON of the active OAuth token set: access_token, refresh_token, expires_at, scope, client_id, site_url, user. */
  oauth: (profile: string) => `${profile}:oauth`,
  /** JSON of the active `test_…` or `live_…` API key and its site (`{key, site_url, user?, app?}`), from `mkt login --with-api-key`. */
  apiKey: (profile: string) => `${profile}:api-key`,
  /**
   * An account of the profile that is signed in but not active (`mkt auth switch`): JSON
   * `{kind: "oauth"|"api-key", secret}` where `secret` is what the active slot held. Indexed in
   * {@link accounts.accountIndex}, since a keychain cannot list its entries.
   */
  parked: (profile: string, siteUrl: string, userId: string) => `${profile}:account:${siteUrl}|${userId}`,
  /** JSON list of the profile's parked accounts (no secrets): `[{site_url, user, kind}]`. */
  accountIndex: (profile: string) => `${profile}:accounts`,
  /**
   * An app's OAuth client secret, for every profile of the site (stored by `mkt apps create` /
   * `rotate-secret` and by a login that worked with a secret given).
   */
  clientSecret: (siteUrl: string, clientId: string) => `site:${siteKey(siteUrl)}:client-secret:${clientId}`,
  /** Where a client secret was kept before it served every profile of its site (still read). */
  legacyClientSecret: (profile: string, clientId: string) => `${profile}:client-secret:${clientId}`,
  /** An app's webhook signing secret. */
  webhookSecret: (profile: string, appId: string) => `${profile}:webhook-secret:${appId}`,
  /** The password of a `--forward-to` URL, by that URL as the journal keeps it (password `***`). */
  forwardPassword: (profile: string, redactedUrl: string) => `${profile}:forward-to:${redactedUrl}`,
};

/** A site URL as a store name: without trailing slashes. */
export function siteKey(siteUrl: string): string {
  return siteUrl.replace(/\/+$/, '');
}
