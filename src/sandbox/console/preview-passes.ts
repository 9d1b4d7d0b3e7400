import { randomBytes } from 'node:crypto';
import { makeRoom } from '../kernel/http/party-bound.js';

/** The dashboard's query parameter that carries a preview pass. */
export const PREVIEW_PARAM = 'preview';
/** How long a preview pass opens an app's dashboard page (each load signs a fresh context token). */
export const PREVIEW_PASS_TTL_MS = 60 * 60_000;
/** Passes kept at most, and per app (past it, that app's oldest pass is forgotten first). */
const PASSES_KEPT = 10_000;
const PASSES_PER_APP = 100;

/**
 * The capability that opens `/dashboard/apps/{app}` (docs/DECISIONS.md §9, "Who sees a context
 * token"): a random pass bound to one app, issued only to a credential that may manage the app (the
 * console's preview, `POST /apps/{id}/preview-links`). Without one the dashboard signs no token.
 * Memory only: a restart forgets them (run `mkt apps preview` again).
 */
export class PreviewPasses {
  private readonly passes = new Map<string, { appId: string; expiresAt: number }>();

  constructor(private readonly now: () => number) {}

  /** A fresh pass for `appId`. */
  issue(appId: string): { pass: string; expiresAt: number } {
    const now = this.now();
    makeRoom(this.passes, appId, {
      partyOf: (v) => v.appId,
      gone: (v) => v.expiresAt <= now,
      perParty: PASSES_PER_APP,
      total: PASSES_KEPT,
      what: 'preview passes',
    });
    const pass = randomBytes(32).toString('base64url');
    const expiresAt = now + PREVIEW_PASS_TTL_MS;
    this.passes.set(pass, { appId, expiresAt });
    return { pass, expiresAt };
  }

  /** Whether `pass` opens `appId`'s dashboard now. */
  opens(pass: string | undefined, appId: string): boolean {
    const found = pass === undefined ? undefined : this.passes.get(pass);
    return found !== undefined && found.appId === appId && found.expiresAt > this.now();
  }
}
