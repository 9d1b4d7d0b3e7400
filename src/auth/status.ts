import type { Credential } from '../api/client.js';
import type { Deps } from '../deps.js';
import { FileStore } from '../credentials/store.js';
import { AuthError, UsageError } from '../errors.js';
import { type Account, findAccount, forget, forgetAll, profileAccounts } from './accounts.js';
import { fetchProfile, type Profile, siteSource } from './login.js';
import { signedInProfiles } from './profiles.js';

/** The `mkt auth status --json` document. */
export interface AuthStatus {
  site_url: string;
  profile: string;
  kind: 'token' | 'test_key' | 'live_key';
  live: boolean;
  /** env, keychain or file. */
  source: string;
  /** Where the credential store keeps secrets (the file's path for the file store). */
  store: string;
  user: Profile | null;
  /** The app an API key belongs to (null for a token, or when the server does not say). */
  app: { id: string; name: string | null } | null;
  client_id: string | null;
  expires_at: string | null;
  scopes: string[];
  /** Every account the profile keeps for this site, the active one marked (`mkt auth switch`). */
  accounts: Array<Pick<Account, 'id' | 'kind' | 'user' | 'active'>>;
}

/** The error for "no credential": names the site (and where it came from), the profile, and the command that fixes it. */
export async function notLoggedIn(deps: Deps): Promise<AuthError> {
  const elsewhere = await deps.session.signedInElsewhere();
  const note = elsewhere
    ? ` Its sign-in belongs to ${elsewhere} and is never sent to another site; sign in to ${deps.siteUrl} too, or use another profile.`
    : '';
  const said =
    deps.siteUrlSource === 'profile'
      ? `Profile "${deps.profile}" is not signed in to ${deps.siteUrl} (its site-url setting).`
      : `Not signed in to ${deps.siteUrl} (from ${siteSource(deps)}) with profile "${deps.profile}".`;
  const { signInHints } = await import('./sign-in-hint.js');
  return new AuthError('not_logged_in', `${said}${note}`, { hints: await signInHints(deps) });
}

/** `mkt auth status`: what the CLI would authenticate with, checked against /whoami (refreshing a token first). */
export async function authStatus(deps: Deps): Promise<AuthStatus> {
  const credential = await deps.session.credential();
  if (!credential) throw await notLoggedIn(deps);
  const user = await fetchProfile(deps, credential);
  const token = credential.token;
  const app = credential.kind === 'token' ? null : await appOfKey(deps, credential);
  const site = deps.siteUrl.replace(/\/+$/, '');
  const kept = (await profileAccounts(deps, deps.profile)).filter((a) => a.site_url === site);
  return {
    site_url: deps.siteUrl,
    profile: deps.profile,
    kind: credential.kind,
    live: credential.kind === 'live_key',
    source: credential.source,
    // A credential still in the file while the keychain is in use lives in the file.
    store:
      credential.source === 'file' && deps.credentials.kind === 'keychain'
        ? new FileStore(deps.configDir).location
        : deps.credentials.location,
    user,
    app,
    client_id: token?.client_id ?? null,
    expires_at: token?.expires_at ? new Date(token.expires_at).toISOString() : null,
    scopes: token?.scope ? token.scope.split(' ').filter(Boolean) : [],
    accounts: kept.map(({ id, kind, user, active }) => ({ id, kind, user, active })),
  };
}

/** The one app an API key lists as its own (`GET /apps`), or null when the server answers otherwise. */
async function appOfKey(deps: Deps, credential: Credential): Promise<AuthStatus['app']> {
  try {
    const res = await deps.api.get<unknown>('/apps', { credential, allowErrorStatus: true });
    const data = res.data as { data?: unknown } | unknown[] | undefined;
    const list = Array.isArray(data) ? data : Array.isArray(data?.data) ? data.data : [];
    if (res.status >= 400 || list.length !== 1) return null;
    const app = list[0] as { id?: unknown; name?: unknown };
    if (typeof app.id !== 'string') return null;
    return { id: app.id, name: typeof app.name === 'string' ? app.name : null };
  } catch {
    return null; // another server, or none to ask: the status stands without it
  }
}

/** `mkt auth token`: a valid access token (refreshed first when it is about to expire). */
export async function accessToken(deps: Deps): Promise<string> {
  const credential = await deps.session.credential();
  if (!credential) throw await notLoggedIn(deps);
  if (credential.kind !== 'token') {
    const kind = credential.kind === 'live_key' ? 'live' : 'test';
    // MKT_API_KEY overrides any sign-in: `mkt login` cannot help while it is set.
    if (credential.source === 'env')
      throw new AuthError(
        'not_a_token',
        `MKT_API_KEY (a ${kind} key) is set; access tokens come from a sign-in.`,
        {
          hints: [
            'unset MKT_API_KEY   (then: mkt login)',
            'MKT_ACCESS_TOKEN=… mkt …   (a token from elsewhere)',
          ],
        },
      );
    throw new AuthError(
      'not_a_token',
      `Profile "${deps.profile}" uses an API key (${kind}); access tokens come from \`mkt login\`.`,
      { hints: ['mkt login'] },
    );
  }
  return credential.secret;
}

/** What `mkt logout` did: each account forgotten, and the one that became active in its place. */
export interface LoggedOut {
  forgotten: Account;
  nowActive: Account | null;
}

/**
 * `mkt logout`: forgets the profile's active sign-in (another kept account of its site takes its
 * place), or the one `--user` names, or with `--all` every sign-in of every profile. App secrets stay.
 */
export async function logout(deps: Deps, options: { all?: boolean; user?: string }): Promise<LoggedOut[]> {
  if (options.all) {
    const profiles = new Set([
      deps.profile,
      'default',
      ...(await signedInProfiles(deps.credentials)),
      ...(await deps.config.profileNames()),
    ]);
    const done: LoggedOut[] = [];
    for (const profile of profiles)
      for (const forgotten of await forgetAll(deps, profile)) done.push({ forgotten, nowActive: null });
    return done;
  }
  const list = await profileAccounts(deps, deps.profile);
  const target = options.user ? findAccount(list, options.user) : list.find((a) => a.active);
  if (options.user && !target) throw noSuchAccount(deps, options.user, list);
  if (!target) return [];
  return [await forget(deps, target)];
}

/** `--user` names no account of the profile: say which ones it has. */
export function noSuchAccount(deps: Deps, user: string, list: Account[]): UsageError {
  const known = list.map((a) => a.user?.email ?? a.id).join(', ');
  return new UsageError(
    `Profile "${deps.profile}" has no account "${user}"${known ? `; it has ${known}` : ''}.`,
    { code: 'no_such_account', hints: ['mkt auth list'] },
  );
}
