import { join } from 'node:path';
import type { ApiResponse, AuthSource, Credential } from '../api/client.js';
import type { Clock } from '../platform/clock.js';
import type { CredentialStore } from '../credentials/store.js';
import { accounts } from '../credentials/accounts.js';
import { storedClientSecret } from '../credentials/client-secret.js';
import { ApiError, AuthError, MktError, UsageError } from '../errors.js';
import { withFileLock } from '../platform/lock-file.js';
import { APP_ID } from '../wire.js';

/** The OAuth token set as stored (JSON) in the credential store. */
export interface StoredToken {
  access_token: string;
  refresh_token?: string;
  token_type: string;
  /** Epoch ms when the access token expires. */
  expires_at?: number;
  /** Epoch ms when it was issued: with expires_at, its lifetime. */
  issued_at?: number;
  scope?: string;
  client_id?: string;
  site_url: string;
  user?: { id: string; email?: string; name?: string };
}

/** What `auth status` reports and the API client sends. */
export interface ResolvedCredential extends Credential {
  token?: StoredToken;
  /** A stored key's app, when sign-in learnt it: no `GET /apps` to find it again. */
  app?: string;
}

/** The kind of a raw API key, or undefined when it is not a marketplace key. */
export function apiKeyKind(key: string): 'test_key' | 'live_key' | undefined {
  if (/^test_\S+$/.test(key)) return 'test_key';
  if (/^live_\S+$/.test(key)) return 'live_key';
  return undefined;
}

/**
 * A token is refreshed when it expires within min(60 s, a quarter of its lifetime), so a request
 * never starts with a dying token and a short-lived one is not refreshed on every call.
 */
const REFRESH_MARGIN_MS = 60_000;

/** A stored API key and the site it was checked against (it is sent nowhere else). */
interface StoredKey {
  key: string;
  site_url?: string;
  /** Who `/whoami` said the key acts as, for `auth list` (keys stored before it have none). */
  user?: { id: string; email?: string; name?: string };
  /** The key's app, as `GET /apps` named it at sign-in (a key acts for one app for good). */
  app?: string;
}

/** The stored form of an API key for `siteUrl`. */
export function storedKey(key: string, siteUrl: string, user?: StoredKey['user'], app?: string): string {
  return JSON.stringify({ key, site_url: siteUrl, user, app } satisfies StoredKey);
}

function parseStoredKey(raw: string): StoredKey {
  try {
    const parsed = JSON.parse(raw) as Partial<StoredKey>;
    if (typeof parsed.key === 'string')
      return {
        key: parsed.key,
        site_url: parsed.site_url,
        app: typeof parsed.app === 'string' && APP_ID.test(parsed.app) ? parsed.app : undefined,
      };
  } catch {
    // stored before keys were bound to a site: a bare key
  }
  return { key: raw };
}

export interface SessionDeps {
  env: Record<string, string | undefined>;
  store: CredentialStore & { resolve?(): Promise<CredentialStore>; kindOf?(account: string): string };
  profile: string;
  clock: Clock;
  /** The site in use: a stored token or key is only ever sent to the site it belongs to. */
  siteUrl?: string;
  /** The site comes from --site-url or MKT_SITE_URL: a key stored without its site is not sent to it. */
  siteOverridden?: boolean;
  /** Where the cross-process refresh lock lives. */
  configDir?: string;
  /** POSTs to the OAuth token endpoint (auth/token-endpoint.ts); without it tokens are not refreshed. */
  tokenRequest?(
    body: Record<string, string>,
    keep?: (res: ApiResponse<Record<string, unknown>>) => Promise<void>,
  ): Promise<ApiResponse<Record<string, unknown>>>;
}

/** Turns a token endpoint response into the stored form; `previous` supplies what a refresh may omit. */
export function tokenFromResponse(
  data: Record<string, unknown> | undefined,
  now: number,
  base: Pick<StoredToken, 'site_url' | 'client_id' | 'user' | 'scope' | 'refresh_token'>,
): StoredToken {
  if (!data || typeof data.access_token !== 'string' || !data.access_token) {
    throw new MktError('bad_token_response', 'The token endpoint answered without an access_token.');
  }
  const expiresIn = Number(data.expires_in);
  return {
    access_token: data.access_token,
    // RFC 6749 section 6: a refresh response may leave out refresh_token; the old one then stays valid.
    refresh_token: typeof data.refresh_token === 'string' ? data.refresh_token : base.refresh_token,
    token_type: typeof data.token_type === 'string' ? data.token_type : 'Bearer',
    expires_at: Number.isFinite(expiresIn) && expiresIn > 0 ? now + expiresIn * 1000 : undefined,
    issued_at: now,
    scope: typeof data.scope === 'string' ? data.scope : base.scope,
    client_id: base.client_id,
    site_url: base.site_url,
    user: base.user,
  };
}

/**
 * Who the CLI acts as, in order: MKT_ACCESS_TOKEN, MKT_API_KEY, then what the profile stored
 * (an API key from `login --with-api-key`, or the OAuth token set from `login`). Stored tokens are
 * refreshed before they expire and after a 401, one process at a time.
 */
export class Session implements AuthSource {
  /** The token this process refreshed to: not refreshed again while it is valid (one command, one refresh). */
  private refreshedTo: StoredToken | undefined;
  /**
   * The profile's entries as this command read them: it asks for its credential more than once (a
   * check, then each request), and a keychain read is a D-Bus connection and a key exchange (~9 ms).
   * Read again under the refresh lock, after a 401, and after a refresh.
   */
  private readonly read = new Map<string, Promise<string | null>>();

  constructor(protected readonly deps: SessionDeps) {}

  async credential(): Promise<ResolvedCredential | null> {
    const { env } = this.deps;
    if (env.MKT_ACCESS_TOKEN) {
      // A value no HTTP header can carry (a captured table, a line break) is a bad credential.
      if (!/^[\x21-\x7e]+$/.test(env.MKT_ACCESS_TOKEN)) {
        throw new AuthError(
          'malformed_token',
          'MKT_ACCESS_TOKEN is not an access token: it holds spaces, line breaks or other characters a token never has.',
          {
            hints: [
              'T=$(mkt simulator authorize --user usr_…)   (prints the access token alone)',
              'unset MKT_ACCESS_TOKEN',
            ],
          },
        );
      }
      return { kind: 'token', secret: env.MKT_ACCESS_TOKEN, source: 'env' };
    }
    if (env.MKT_API_KEY) {
      const kind = apiKeyKind(env.MKT_API_KEY);
      if (!kind)
        throw new UsageError('MKT_API_KEY must be a test_… or live_… key.', { code: 'invalid_api_key' });
      return { kind, secret: env.MKT_API_KEY, source: 'env' };
    }
    const key = await this.storedKey();
    if (key) {
      const kind = apiKeyKind(key.key);
      if (kind && this.keyForThisSite(key))
        return {
          kind,
          secret: key.key,
          source: await this.storeKind(accounts.apiKey(this.deps.profile)),
          app: key.app,
        };
    }
    let token = await this.storedToken();
    if (!token || !this.forThisSite(token)) return null;
    if (this.expiresSoon(token) && this.deps.tokenRequest && !this.justRefreshed(token.access_token))
      token = await this.refresh(token, false);
    return this.asCredential(token);
  }

  /** The site another stored credential of this profile belongs to, when it is not the site in use. */
  async signedInElsewhere(): Promise<string | null> {
    const key = await this.storedKey();
    if (key && !this.keyForThisSite(key)) return key.site_url ?? 'the site stored in the profile';
    const token = await this.storedToken();
    return token && !this.forThisSite(token) ? token.site_url : null;
  }

  /** After a 401: the stored token refreshed (or already refreshed by another process), else null. */
  async afterUnauthorized(failed: Credential): Promise<Credential | null> {
    if (failed.kind !== 'token' || failed.source === 'env' || !this.deps.tokenRequest) return null;
    // Refused right after we renewed it: renewing again would not help.
    if (this.justRefreshed(failed.secret)) return null;
    const token = await this.storedToken(true);
    if (!token || !this.forThisSite(token)) return null;
    if (token.access_token !== failed.secret) return this.asCredential(token);
    return this.asCredential(await this.refresh(token, true));
  }

  /** `account` as stored: as this command read it before, unless `fresh`. */
  private stored(account: string, fresh = false): Promise<string | null> {
    const known = fresh ? undefined : this.read.get(account);
    if (known) return known;
    const reading = this.deps.store.get(account);
    this.read.set(account, reading);
    // A failed read is not remembered.
    reading.catch(() => this.read.get(account) === reading && this.read.delete(account));
    return reading;
  }

  /** The stored OAuth token set, or null when none (or an unreadable one) is stored. */
  private async storedToken(fresh = false): Promise<StoredToken | null> {
    const raw = await this.stored(accounts.oauth(this.deps.profile), fresh);
    if (!raw) return null;
    try {
      const token = JSON.parse(raw) as StoredToken;
      return typeof token.access_token === 'string' ? token : null;
    } catch {
      return null;
    }
  }

  /** True unless the token was issued by another site than the one in use (it is then never sent). */
  private forThisSite(token: StoredToken): boolean {
    return this.sameSite(token.site_url);
  }

  private async storedKey(): Promise<StoredKey | null> {
    const raw = await this.stored(accounts.apiKey(this.deps.profile));
    return raw ? parseStoredKey(raw) : null;
  }

  private keyForThisSite(key: StoredKey): boolean {
    return key.site_url ? this.sameSite(key.site_url) : !this.deps.siteOverridden;
  }

  private sameSite(siteUrl: string | undefined): boolean {
    const site = this.deps.siteUrl;
    return !site || !siteUrl || siteUrl.replace(/\/+$/, '') === site.replace(/\/+$/, '');
  }

  /** Where the credential store keeps `account`: keychain or file. */
  private async storeKind(account: string): Promise<string> {
    const kind = (await this.deps.store.resolve?.())?.kind ?? this.deps.store.kind;
    return this.deps.store.kindOf?.(account) ?? kind;
  }

  private justRefreshed(accessToken: string): boolean {
    const to = this.refreshedTo;
    return to?.access_token === accessToken && (to.expires_at ?? Infinity) > this.deps.clock.now();
  }

  private expiresSoon(token: StoredToken): boolean {
    if (token.expires_at === undefined) return false;
    const lifetime = token.issued_at === undefined ? Infinity : token.expires_at - token.issued_at;
    return token.expires_at - this.deps.clock.now() <= Math.min(REFRESH_MARGIN_MS, lifetime / 4);
  }

  private async asCredential(token: StoredToken): Promise<ResolvedCredential> {
    return {
      kind: 'token',
      secret: token.access_token,
      source: await this.storeKind(accounts.oauth(this.deps.profile)),
      token,
    };
  }

  /**
   * Spends the refresh token under a lock shared by every mkt process of this config folder; after
   * taking the lock the stored token is read again, and used as it is if another process refreshed it.
   */
  private async refresh(seen: StoredToken, force: boolean): Promise<StoredToken> {
    const { clock, profile } = this.deps;
    const lockPath = join(this.deps.configDir ?? '.', 'locks', `${profile}.refresh.lock`);
    return withFileLock(lockPath, clock, async () => {
      const current = (await this.storedToken(true)) ?? seen;
      // Another process refreshed it, or (unless a 401 forces it) it is still good: nothing to spend.
      const changed = current.access_token !== seen.access_token;
      if (!this.expiresSoon(current) && (changed || !force)) return (this.refreshedTo = current);
      try {
        return (this.refreshedTo = await this.spend(current));
      } finally {
        this.read.delete(accounts.oauth(profile)); // stored anew, or forgotten
      }
    });
  }

  private async spend(token: StoredToken): Promise<StoredToken> {
    const { clock, env, profile, store } = this.deps;
    const stillValid = token.expires_at === undefined || token.expires_at > clock.now();
    const fail = (message: string, code = 'session_expired'): StoredToken => {
      // A token that still works is better than none: a refresh before expiry may fail quietly.
      if (stillValid && code !== 'refresh_rejected') return token;
      throw new AuthError(code, `${message} Sign in again.`, { hints: ['mkt login'] });
    };
    if (!token.refresh_token)
      return fail(`Your sign-in to ${token.site_url} expired and has no refresh token.`);
    if (!token.client_id) return fail(`Your sign-in to ${token.site_url} expired; its client id is unknown.`);
    const secret =
      env.MKT_CLIENT_SECRET ||
      (await storedClientSecret(store, { siteUrl: token.site_url, profile }, token.client_id));
    if (!secret) {
      if (stillValid) return token;
      throw new AuthError(
        'client_secret_needed',
        `Your sign-in to ${token.site_url} expired; renewing it needs the client secret of ${token.client_id}.`,
        {
          hints: [
            'MKT_CLIENT_SECRET=… mkt auth token   (set the variable from your secret manager)',
            'mkt login',
          ],
        },
      );
    }
    let next: StoredToken | undefined;
    // The server rotated the refresh token when it answered: the new pair is stored before anything
    // else happens (docs/DECISIONS.md, refresh token rotation), so a crash after it keeps the sign-in.
    const keep = async (res: ApiResponse<Record<string, unknown>>) => {
      next = tokenFromResponse(res.data, clock.now(), token);
      await store.set(accounts.oauth(profile), JSON.stringify(next));
    };
    try {
      const res = await this.deps.tokenRequest!(
        {
          grant_type: 'refresh_token',
          refresh_token: token.refresh_token,
          client_id: token.client_id,
          client_secret: secret,
        },
        keep,
      );
      if (!next) await keep(res);
    } catch (err) {
      if (err instanceof AuthError && err.code === 'invalid_grant') {
        // The server says this grant is dead: forget it, so nothing keeps retrying it.
        await store.delete(accounts.oauth(profile));
        return fail(`Your sign-in to ${token.site_url} was revoked or has expired.`, 'refresh_rejected');
      }
      if (err instanceof ApiError || err instanceof AuthError) {
        return fail(`Your sign-in to ${token.site_url} expired and could not be renewed (${err.message}).`);
      }
      throw err;
    }
    return next!;
  }
}
