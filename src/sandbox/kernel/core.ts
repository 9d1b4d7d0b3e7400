import type { Life } from '../billing/life.js';
import type { ConsoleRoom } from '../console/room.js';
import type { RateLimiter } from './http/rate-limit.js';
import type { AuthorizationRequest } from '../oauth/request.js';
import type { AppRecord, KeyRecord, Scope, UserRecord } from './storage/records.js';
import type { Ledger } from './storage/ledger.js';
import type { Deliveries } from './deliveries/dispatcher.js';
import type { Relay } from './deliveries/fanout.js';
import type { Streams } from './streams.js';

/** What every handler may use: the state, deliveries, the relay, the clock and the public address. */
export interface SandboxCore {
  ledger: Ledger;
  deliveries: Deliveries;
  relay: Relay;
  /** Every open stream by the credential that opened it (closed when that credential is gone). */
  streams: Streams;
  /** Business time, subscriptions over it, money, usage and revocation (docs/DECISIONS.md §5). */
  life: Life;
  rateLimiter: RateLimiter;
  /** The developer console: its sessions, pages and the request log. */
  console: ConsoleRoom;
  now: () => number;
  siteUrl: string;
  port: number;
  /** Authorization requests shown on a consent page, by id (memory only: they live 10 minutes). */
  authRequests: Map<string, AuthorizationRequest>;
  /** Pending authorization codes (memory only: they live 60 s). */
  codes: Map<string, AuthorizationCode>;
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

/** Who is calling: a user's token (with its grant's family) or an app's API key. */
export type Principal =
  | { kind: 'token'; user: UserRecord; app: AppRecord; scopes: Scope[]; family: string }
  | { kind: 'key'; key: KeyRecord; app: AppRecord };
