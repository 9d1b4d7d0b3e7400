import type { DatabaseSync } from 'node:sqlite';
import { HEADER } from '../../wire.js';
import { randomId } from '../kernel/ids.js';
import type { Scope } from '../kernel/storage/records.js';
import { createConsoleApp } from './app.js';
import type { ConsolePrincipal } from './request.js';
import { DeliveryRecords } from '../kernel/deliveries/delivery-records.js';
import { loggedApps, RequestLog, type FinishedRequest } from '../logs/request-log.js';
import { PREVIEW_PARAM, PreviewPasses } from './preview-passes.js';
import { CONSOLE_SESSION_MS, ConsoleSessions } from './sessions.js';

/** The scopes of the console's credential when the developer began it by `mkt sandbox start`. */
const CONSOLE_SCOPES: Scope[] = ['identity:read', 'entitlements:read', 'apps:write'];

/** What the console room needs of the sandbox. */
export interface ConsoleRoomDeps {
  /** The sandbox's database (the deliveries and their attempts are read from it). */
  db: DatabaseSync;
  now: () => number;
  siteUrl: () => string;
  port: () => number;
  /** Keeps an access token (the console session's credential) the way the token endpoint does. */
  saveToken(token: {
    token: string;
    kind: 'access';
    app_id: string;
    user_id: string;
    scopes: Scope[];
    expires_at: number;
    family: string;
  }): Promise<void>;
}

/** Who asks for a console link: the developer, through one of their app's keys or their own sign-in. */
export interface ConsoleRequester {
  developerId: string;
  /** The app of the credential (a key's, or the token's client). */
  appId: string;
  /** Set when the credential is an API key: the console then acts with that key, on that app only. */
  key?: { id: string; secret: string };
  /**
   * Set when the credential is a token: the console's token joins that grant (revoked with it, counted
   * with it), with its scopes, and ends no later than it. Absent: the developer's own sign-in.
   */
  grant?: { family: string; scopes: Scope[]; expiresAt: number | null };
  /** Who, in words. */
  label: string;
}

/**
 * The console's room in the sandbox: its sessions, the request log, and the pages. The console acts
 * through the sandbox's own API with a token of its own, so it can do only what the API allows.
 */
export class ConsoleRoom {
  readonly sessions: ConsoleSessions<ConsolePrincipal>;
  readonly requestLog = new RequestLog();
  readonly deliveries: DeliveryRecords;
  /** The passes that open an app's dashboard page (the console's Preview, `mkt apps preview`). */
  readonly previews: PreviewPasses;
  /** Serves /console: pages, forms, assets. */
  readonly app: { fetch(request: Request): Response | Promise<Response> };

  constructor(private readonly deps: ConsoleRoomDeps) {
    this.sessions = new ConsoleSessions(deps.now);
    this.deliveries = new DeliveryRecords(deps.db);
    this.previews = new PreviewPasses(deps.now);
    this.app = createConsoleApp({
      previewLink: (appId, userId) => this.previewLink(appId, userId),
      sessions: this.sessions,
      transport: (request) => fetch(request),
      siteUrl: deps.siteUrl,
      port: deps.port,
    });
  }

  /**
   * A one-time console link for whoever asked (`POST /console/sessions`, `mkt sandbox start`). The
   * session acts with exactly the rights of that credential (docs/DECISIONS.md, "What a console session
   * may do"): begun with a key, the console sends that very key, so the API grants it what it grants the
   * key and nothing more; begun by the developer, a token of the developer's own rights (`apps:write`).
   */
  async link(who: ConsoleRequester): Promise<{ url: string; expires_at: string }> {
    let credential: Pick<ConsolePrincipal, 'headers' | 'token'>;
    if (who.key) credential = { headers: { [HEADER.apiKey]: who.key.secret } };
    else {
      const token = randomId('at', 24);
      const end = this.deps.now() + CONSOLE_SESSION_MS + 5 * 60_000;
      const grant = who.grant ?? { family: randomId('con', 8), scopes: [...CONSOLE_SCOPES], expiresAt: null };
      await this.deps.saveToken({
        token,
        kind: 'access',
        app_id: who.appId,
        user_id: who.developerId,
        scopes: grant.scopes,
        expires_at: grant.expiresAt === null ? end : Math.min(end, grant.expiresAt),
        family: grant.family,
      });
      credential = { headers: { authorization: `Bearer ${token}` }, token };
    }
    const { ticket, expiresAt } = this.sessions.issueTicket({
      developerId: who.developerId,
      appId: who.key ? who.appId : null,
      ...credential,
      label: who.label,
    });
    return {
      url: `${this.deps.siteUrl()}/console/enter?ticket=${ticket}`,
      expires_at: new Date(expiresAt).toISOString(),
    };
  }

  /** A dashboard link that shows `appId` (as `userId`, else a user picker), for a caller who may manage the app. */
  previewLink(appId: string, userId?: string): { url: string; expires_at: string } {
    const { pass, expiresAt } = this.previews.issue(appId);
    const query = new URLSearchParams({ [PREVIEW_PARAM]: pass });
    if (userId) query.set('user_id', userId);
    return {
      url: `${this.deps.siteUrl()}/dashboard/apps/${encodeURIComponent(appId)}?${query}`,
      expires_at: new Date(expiresAt).toISOString(),
    };
  }

  /**
   * Keeps a finished API request in the log of the caller's app (and of the app its path names, when
   * the caller manages it). `ownerOf` answers an app's developer.
   */
  recordRequest(input: Omit<FinishedRequest, 'now'>, ownerOf: (appId: string) => string | undefined): void {
    const request: FinishedRequest = { ...input, now: this.deps.now() };
    for (const appId of loggedApps(input.caller, input.url, ownerOf)) this.requestLog.append(appId, request);
  }
}
