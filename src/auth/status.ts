import type { Deps } from '../deps.js';
import { accounts } from '../credentials/accounts.js';
import { AuthError } from '../errors.js';
import { fetchProfile, type Profile } from './login.js';
import { markSignedIn, signedInProfiles } from './profiles.js';

/** The `mkt auth status --json` document. */
export interface AuthStatus {
  site_url: string;
  profile: string;
  kind: 'token' | 'test_key' | 'live_key';
  live: boolean;
  /** env, keychain, file or memory. */
  source: string;
  user: Profile | null;
  client_id: string | null;
  expires_at: string | null;
  scopes: string[];
}

/** The error for "no credential": names the site and profile, and the command that fixes it. */
export async function notLoggedIn(deps: Deps): Promise<AuthError> {
  const token = await deps.session.storedToken();
  const elsewhere =
    token && !deps.session.forThisSite(token) ? ` (this profile is signed in to ${token.site_url})` : '';
  return new AuthError(
    'not_logged_in',
    `Not logged in to ${deps.siteUrl} with profile "${deps.profile}"${elsewhere}.`,
    {
      hints: ['mkt login', 'mkt login --with-api-key < key.txt'],
    },
  );
}

/** `mkt auth status`: what the CLI would authenticate with, checked against /whoami (refreshing a token first). */
export async function authStatus(deps: Deps): Promise<AuthStatus> {
  const credential = await deps.session.credential();
  if (!credential) throw await notLoggedIn(deps);
  const header: Record<string, string> =
    credential.kind === 'token'
      ? { authorization: `Bearer ${credential.secret}` }
      : { 'x-api-key': credential.secret };
  const user = await fetchProfile(deps, header);
  const token = credential.token;
  return {
    site_url: deps.siteUrl,
    profile: deps.profile,
    kind: credential.kind,
    live: credential.kind === 'live_key',
    source: credential.source,
    user,
    client_id: token?.client_id ?? null,
    expires_at: token?.expires_at ? new Date(token.expires_at).toISOString() : null,
    scopes: token?.scope ? token.scope.split(' ').filter(Boolean) : [],
  };
}

/** `mkt auth token`: a valid access token (refreshed first when it is about to expire). */
export async function accessToken(deps: Deps): Promise<string> {
  const credential = await deps.session.credential();
  if (!credential) throw await notLoggedIn(deps);
  if (credential.kind !== 'token') {
    throw new AuthError(
      'not_a_token',
      `Profile "${deps.profile}" uses an API key (${credential.kind === 'live_key' ? 'live' : 'test'}); access tokens come from \`mkt login\`.`,
      { hints: ['mkt login'] },
    );
  }
  return credential.secret;
}

/** `mkt logout`: forgets the tokens and API keys of the profiles (app secrets are kept). */
export async function logout(deps: Deps, options: { all?: boolean }): Promise<string[]> {
  const profiles = options.all
    ? [
        ...new Set([
          deps.profile,
          'default',
          ...(await signedInProfiles(deps.credentials)),
          ...(await deps.config.profileNames()),
        ]),
      ]
    : [deps.profile];
  const forgotten: string[] = [];
  for (const profile of profiles) {
    const token = await deps.credentials.delete(accounts.oauth(profile));
    const key = await deps.credentials.delete(accounts.apiKey(profile));
    await markSignedIn(deps.credentials, profile, false);
    if (token || key) forgotten.push(profile);
  }
  return forgotten;
}
