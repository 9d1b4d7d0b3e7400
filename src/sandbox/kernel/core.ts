import type { RateLimiter } from './http/rate-limit.js';
import type { AppRecord, Scope } from './storage/records.js';
import type { Ledger } from './storage/ledger.js';
import type { Deliveries } from './deliveries/dispatcher.js';
import type { Relay } from './deliveries/fanout.js';
import type { Principal } from './principal.js';
import type { Streams } from './streams.js';

export type { Principal } from './principal.js';

/** What every handler may use: the state, deliveries, the relay, the clock and the public address. */
export interface SandboxCore {
  ledger: Ledger;
  deliveries: Deliveries;
  relay: Relay;
  /** Every open stream by the credential that opened it (closed when that credential is gone). */
  streams: Streams;
  /**
   * The services' own state, each found by its class: billing's `Life` (business time, subscriptions,
   * money, usage), the console's `ConsoleRoom` (sessions, pages, the request log).
   */
  services: Services;
  rateLimiter: RateLimiter;
  /** Before an API request runs, with its caller (billing counts a user's calls). */
  onApiCall: (principal: Principal) => void;
  /** Once an API request is answered (the console keeps it in the request log of its app). */
  onAnswered: (request: AnsweredRequest) => void;
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

/** An API request once answered, as the API guard reports it (src/sandbox/kernel/http/guards.ts). */
export interface AnsweredRequest {
  id: string;
  startedAt: number;
  method: string;
  url: string;
  /** The route the router matched (`/api/v1/apps/:app_id/plans`), or a catch-all when none did. */
  route: string;
  status: number;
  caller: Principal;
  errorCode?: string;
}

/**
 * A validated authorization request, stored when the consent page is shown; the form carries only
 * its id and anti-CSRF token, so scope, redirect URI, state and challenge cannot be changed on the way
 * back (docs/DECISIONS.md §2, consent).
 */
export interface AuthorizationRequest {
  id: string;
  csrf: string;
  app: AppRecord;
  redirectUri: string;
  scopes: Scope[];
  state: string | null;
  codeChallenge: string | null;
  expiresAt: number;
}

/**
 * The state objects of the services above the kernel, by class: the kernel never names a service,
 * a service names the one it uses (`core.services.get(Life)`, an import the layering rule checks).
 */
export class Services {
  readonly #byClass = new Map<unknown, unknown>();

  add(service: object): this {
    this.#byClass.set(service.constructor, service);
    return this;
  }

  get<T>(service: { prototype: T; name: string }): T {
    const found = this.#byClass.get(service);
    if (found === undefined) throw new Error(`This sandbox has no ${service.name}.`);
    return found as T;
  }
}
