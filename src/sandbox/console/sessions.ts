import { randomBytes } from 'node:crypto';

/** How long a one-time console link works (docs/DECISIONS.md §6). */
export const CONSOLE_LINK_TTL_MS = 5 * 60_000;
/** How long a console session lasts (the credential it acts with lives as long). */
export const CONSOLE_SESSION_MS = 12 * 60 * 60_000;
/** Form tokens kept per session (each page render issues one; older ones are forgotten). */
const FORM_TOKENS_KEPT = 200;

/** A message for the next page, and a secret shown on it once (just created: never shown again). */
export interface Flash {
  kind: 'ok' | 'error';
  message: string;
  secret?: { label: string; value: string };
}

/** A signed-in console: who it acts as, and its one-time form tokens. */
export interface ConsoleSession<P> {
  id: string;
  principal: P;
  expiresAt: number;
  formTokens: Set<string>;
  flash: Flash | undefined;
}

const secret = () => randomBytes(32).toString('base64url');

/**
 * The console's one-time links and sessions, in memory (a restart signs everyone out: run
 * `mkt sandbox console` again). `P` is who a session acts as; this module never looks inside it.
 */
export class ConsoleSessions<P> {
  private readonly tickets = new Map<string, { principal: P; expiresAt: number }>();
  private readonly sessions = new Map<string, ConsoleSession<P>>();

  constructor(private readonly now: () => number) {}

  /** A fresh one-time ticket for `principal`, good for {@link CONSOLE_LINK_TTL_MS}. */
  issueTicket(principal: P): { ticket: string; expiresAt: number } {
    this.sweep();
    const ticket = secret();
    const expiresAt = this.now() + CONSOLE_LINK_TTL_MS;
    this.tickets.set(ticket, { principal, expiresAt });
    return { ticket, expiresAt };
  }

  /** Spends a ticket (once, within its time) and opens a session; undefined for a used, stale or unknown one. */
  redeem(ticket: string): ConsoleSession<P> | undefined {
    const found = this.tickets.get(ticket);
    this.tickets.delete(ticket);
    if (!found || found.expiresAt <= this.now()) return undefined;
    const session: ConsoleSession<P> = {
      id: secret(),
      principal: found.principal,
      expiresAt: this.now() + CONSOLE_SESSION_MS,
      formTokens: new Set(),
      flash: undefined,
    };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session with this id, or undefined. */
  session(id: string | undefined): ConsoleSession<P> | undefined {
    const session = id === undefined ? undefined : this.sessions.get(id);
    if (!session) return undefined;
    if (session.expiresAt <= this.now()) {
      this.sessions.delete(session.id);
      return undefined;
    }
    return session;
  }

  /** Ends a session (sign out). */
  end(session: ConsoleSession<P>): void {
    this.sessions.delete(session.id);
  }

  /** A new one-time anti-CSRF token for the forms of one page. */
  formToken(session: ConsoleSession<P>): string {
    const token = secret();
    session.formTokens.add(token);
    if (session.formTokens.size > FORM_TOKENS_KEPT) {
      const oldest = session.formTokens.values().next().value as string;
      session.formTokens.delete(oldest);
    }
    return token;
  }

  /** Spends a form token: true once for a token this session was given, false for a missing or replayed one. */
  spendFormToken(session: ConsoleSession<P>, token: unknown): boolean {
    return typeof token === 'string' && session.formTokens.delete(token);
  }

  /** Ends every session of whoever `matches` (a revoked key, a deleted app). */
  endWhere(matches: (principal: P) => boolean): void {
    for (const s of this.sessions.values()) if (matches(s.principal)) this.sessions.delete(s.id);
  }

  private sweep(): void {
    const now = this.now();
    for (const [t, v] of this.tickets) if (v.expiresAt <= now) this.tickets.delete(t);
  }
}
