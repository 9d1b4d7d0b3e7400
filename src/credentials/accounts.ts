/** Names of the secrets mkt keeps per profile in the credential store (service "mkt"). */
export const accounts = {
  /** JSON of the OAuth token set: access_token, refresh_token, expires_at, scope, client_id, site_url. */
  oauth: (profile: string) => `${profile}:oauth`,
  /** JSON of a `test_…` or `live_…` API key and its site (`{key, site_url}`), from `mkt login --with-api-key`. */
  apiKey: (profile: string) => `${profile}:api-key`,
  /** An app's OAuth client secret, stored by `mkt apps create` / `rotate-secret` for `mkt login`. */
  clientSecret: (profile: string, clientId: string) => `${profile}:client-secret:${clientId}`,
  /** An app's webhook signing secret. */
  webhookSecret: (profile: string, appId: string) => `${profile}:webhook-secret:${appId}`,
  /** The password of a `--forward-to` URL, by that URL as the journal keeps it (password `***`). */
  forwardPassword: (profile: string, redactedUrl: string) => `${profile}:forward-to:${redactedUrl}`,
};
