import type { Deps } from '../deps.js';

/** The member of the sandbox's RFC 8414 metadata that names its seeded app's client id. */
export const SANDBOX_CLIENT_ID = 'sandbox_client_id';

/**
 * The `mkt login` lines that work from here, with no sign-in: the profile's own client id; else, on
 * a local sandbox, its seeded app's client id (the sandbox publishes it in its metadata) and the
 * developer's scope, as the README's tour signs in; else the client id to fill in, or an API key.
 */
export async function signInHints(deps: Deps): Promise<string[]> {
  const flags = deps.hintFlags ? ` ${deps.hintFlags}` : '';
  if (await deps.config.get(deps.profile, 'client-id')) return [`mkt login${flags}`];
  const seeded = await sandboxClientId(deps);
  if (seeded) return [`mkt login --client-id ${seeded} --scope apps:write${flags}`];
  return [
    `mkt login --client-id cid_…${flags}   (your app's client id)`,
    `mkt login --with-api-key${flags} < key.txt`,
  ];
}

/** The seeded app's client id of the local sandbox at the site, if the site is one and answers. */
async function sandboxClientId(deps: Deps): Promise<string | undefined> {
  const site = new URL(deps.siteUrl);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(site.hostname)) return undefined;
  const res = await deps.api
    .request<Record<string, unknown>>('GET', `${site.origin}/.well-known/oauth-authorization-server`, {
      auth: false,
      allowErrorStatus: true,
      signal: AbortSignal.timeout(2_000),
    })
    .catch(() => undefined);
  const id =
    res?.status === 200 && res.data && typeof res.data === 'object' ? res.data[SANDBOX_CLIENT_ID] : undefined;
  return typeof id === 'string' && /^cid_[A-Za-z0-9_-]{1,100}$/.test(id) ? id : undefined;
}
