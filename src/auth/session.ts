import type { AuthSource, Credential } from '../api/client.js';
import type { Clock } from '../clock.js';
import type { CredentialStore } from '../credentials/store.js';
import { accounts } from '../credentials/accounts.js';
import { UsageError } from '../errors.js';

/** The OAuth token set as stored (JSON) in the credential store. */
export interface StoredToken {
  access_token: string;
  refresh_token?: string;
  token_type: string;
  /** Epoch ms when the access token expires. */
  expires_at?: number;
  scope?: string;
  client_id?: string;
  site_url: string;
  user?: { id: string; email?: string; name?: string };
}

/** What `auth status` reports and the API client sends. */
export interface ResolvedCredential extends Credential {
  token?: StoredToken;
}

/** The kind of a raw API key, or undefined when it is not a marketplace key. */
export function apiKeyKind(key: string): 'test_key' | 'live_key' | undefined {
  if (/^test_\S+$/.test(key)) return 'test_key';
  if (/^live_\S+$/.test(key)) return 'live_key';
  return undefined;
}

export interface SessionDeps {
  env: Record<string, string | undefined>;
  store: CredentialStore & { resolve?(): Promise<CredentialStore> };
  profile: string;
  clock: Clock;
}

/**
 * Who the CLI acts as, in order: MKT_ACCESS_TOKEN, MKT_API_KEY, then what the profile stored
 * (an API key from `login --with-api-key`, or the OAuth token set from `login`).
 */
export class Session implements AuthSource {
  constructor(protected readonly deps: SessionDeps) {}

  async credential(): Promise<ResolvedCredential | null> {
    const { env, profile } = this.deps;
    if (env.MKT_ACCESS_TOKEN) return { kind: 'token', secret: env.MKT_ACCESS_TOKEN, source: 'env' };
    if (env.MKT_API_KEY) {
      const kind = apiKeyKind(env.MKT_API_KEY);
      if (!kind)
        throw new UsageError('MKT_API_KEY must be a test_… or live_… key.', { code: 'invalid_api_key' });
      return { kind, secret: env.MKT_API_KEY, source: 'env' };
    }
    const key = await this.deps.store.get(accounts.apiKey(profile));
    if (key) {
      const kind = apiKeyKind(key);
      if (kind) return { kind, secret: key, source: await this.storeKind() };
    }
    const token = await this.storedToken();
    if (token) return { kind: 'token', secret: token.access_token, source: await this.storeKind(), token };
    return null;
  }

  /** The stored OAuth token set, or null when none (or an unreadable one) is stored. */
  async storedToken(): Promise<StoredToken | null> {
    const raw = await this.deps.store.get(accounts.oauth(this.deps.profile));
    if (!raw) return null;
    try {
      const token = JSON.parse(raw) as StoredToken;
      return typeof token.access_token === 'string' ? token : null;
    } catch {
      return null;
    }
  }

  protected async storeKind(): Promise<string> {
    return (await this.deps.store.resolve?.())?.kind ?? this.deps.store.kind;
  }
}
