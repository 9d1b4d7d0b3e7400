import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Deliveries } from './deliveries.js';
import type { RateLimiter } from './rate-limit.js';
import type { AppRecord, KeyRecord, Scope, Store, UserRecord } from './store.js';

/** What every handler may use: the state, deliveries, the clock and the public address. */
export interface SandboxCore {
  store: Store;
  deliveries: Deliveries;
  rateLimiter: RateLimiter;
  now: () => number;
  siteUrl: string;
  /** Pending authorization codes (memory only: they live 60 s). */
  codes: Map<string, AuthorizationCode>;
  /** Spent refresh tokens mapped to their family, to detect reuse. */
  spentRefreshTokens: Map<string, string>;
}

/** A pending authorization code, bound to client, redirect URI and PKCE challenge. */
export interface AuthorizationCode {
  code: string;
  app_id: string;
  client_id: string;
  redirect_uri: string;
  user_id: string;
  scopes: Scope[];
  code_challenge: string | null;
  expires_at: number;
  used: boolean;
  family: string;
}

/** Who is calling: a user's token or an app's API key. */
export type Principal =
  | { kind: 'token'; user: UserRecord; app: AppRecord; scopes: Scope[] }
  | { kind: 'key'; key: KeyRecord; app: AppRecord };

/** A request to an authenticated API route. */
export interface ApiContext {
  core: SandboxCore;
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  params: Record<string, string>;
  principal: Principal;
}

/** What an API handler answers; `streamed` means the handler wrote the response itself. */
export type ApiResult =
  { status: number; body?: unknown; headers?: Record<string, string> } | { streamed: true };
