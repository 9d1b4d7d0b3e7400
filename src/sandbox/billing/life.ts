import type { z } from 'zod';
import type { TestUser } from '../kernel/shapes.js';
import type { SandboxCore } from '../kernel/core.js';
import { SandboxApiError } from '../kernel/http/problem.js';
import { isoStamp, randomId, secretsEqual } from '../kernel/ids.js';
import type { AppRecord, Scope, UserRecord } from '../kernel/storage/records.js';
import type { EmitResult } from '../kernel/deliveries/dispatcher.js';
import { accessDecision, entitlementView, type EntitlementView } from './access.js';
import { BusinessClock } from './clock.js';
import { advanceClockInSteps, runDue } from './due.js';
import { forceStatus } from './force.js';
import { cancel, changePlan, subscribe } from './lifecycle.js';
import { BillingRefusal, type PaymentBehaviour, type SubStatus, type Transition } from './records.js';
import type { SqlBillingStore } from './sql-store.js';

/** How often transitions that fall due in real time are run between requests. */
const SWEEP_MS = 5_000;
/** How long a payment processor's connect link may be used (once). */
const CONNECT_TTL_MS = 10 * 60_000;

/** A pending connect page of the simulated processor (memory only: it lives 10 minutes). */
export interface ConnectLink {
  id: string;
  app_id: string;
  csrf: string;
  expires_at: string;
}

/** A refusal of billing as the API answers it. */
export function apiError(e: unknown): unknown {
  return e instanceof BillingRefusal ? new SandboxApiError(e.status, e.code, e.message) : e;
}

/**
 * The marketplace's life in the sandbox (docs/DECISIONS.md §5): the business clock, the subscription
 * transitions with the events they send, payment accounts, usage and revocation. Routes call this;
 * the rules themselves are the plain billing modules beside it.
 */
export class Life {
  readonly clock: BusinessClock;
  private timer: NodeJS.Timeout | undefined;
  private readonly links = new Map<string, ConnectLink>();
  /** The last advance asked for: each waits for the one before it (one at a time, in order). */
  private advancing: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly core: SandboxCore,
    readonly store: SqlBillingStore,
  ) {
    this.clock = new BusinessClock(() => core.now(), store);
  }

  /** At start: carries an earlier folder's subscriptions forward, links the seeded app, runs what fell due. */
  start(): void {
    this.store.carryForward();
    const seedApp = this.core.ledger.seed.app_id;
    if (seedApp !== '') this.store.linkPayouts(seedApp, 'acct_sandbox', isoStamp(this.clock.now()));
    this.catchUp();
    this.timer = setInterval(() => {
      try {
        this.catchUp();
      } catch {
        // A failed write (a full disk) rolled its group back; the next sweep tries again.
      }
    }, SWEEP_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Sends the events of one transition, in order (sequence numbers are taken at once). */
  send(t: Transition, background = false): Promise<EmitResult[]> {
    const app = this.core.ledger.app(t.app_id);
    if (!app) return Promise.resolve([]);
    return Promise.all(t.events.map((e) => this.core.deliveries.emit(app, e.event, e.data, { background })));
  }

  private sendInBackground(t: Transition): void {
    if (t.events.length > 0) this.send(t, true).catch(() => undefined);
  }

  /**
   * Runs every transition due by now (business time), sending its events; nothing while the clock
   * is being advanced (the advance runs them, and reads meanwhile see the state before it).
   */
  catchUp(): Transition[] {
    const out: Transition[] = [];
    if (this.core.ledger.busy) return out;
    runDue(this.store, this.clock.now(), (t) => {
      out.push(t);
      this.sendInBackground(t);
    });
    return out;
  }

  clockView(): { now: string; offset_s: number } {
    return { now: isoStamp(this.clock.now()), offset_s: Math.floor(this.clock.offsetMs() / 1000) };
  }

  /**
   * `POST /simulator/clock`: moves business time, running and listing every transition on the way,
   * in one transaction written in steps (other requests read the state before it meanwhile); checked
   * before anything is written, and all or nothing (docs/DECISIONS.md, the clock's advance).
   */
  advance(input: { advance_s?: number; to?: number }) {
    const run = this.advancing.then(() => this.advanceNow(input));
    this.advancing = run.catch(() => undefined);
    return run;
  }

  private async advanceNow(input: { advance_s?: number; to?: number }) {
    const transitions: Transition[] = [];
    try {
      const moved = await this.core.ledger.long((step) =>
        advanceClockInSteps(
          this.store,
          this.clock,
          { advance_ms: input.advance_s === undefined ? undefined : input.advance_s * 1000, to: input.to },
          (t) => {
            transitions.push(t);
            this.sendInBackground(t);
          },
          step,
        ),
      );
      return { from: isoStamp(moved.from), ...this.clockView(), transitions };
    } catch (e) {
      throw apiError(e);
    }
  }

  /** The entitlement now: what fell due is run first, only when this subscription has (a read stays a read). */
  currentEntitlement(appId: string, userId: string): EntitlementView | null {
    let sub = this.store.subscription(appId, userId);
    const due = sub?.next_at;
    if (due !== null && due !== undefined && due <= this.clock.now()) {
      this.catchUp();
      sub = this.store.subscription(appId, userId);
    }
    return entitlementView(appId, userId, sub, (id) => this.store.plan(appId, id));
  }

  /** The user's entitlement on the app (their subscription, else the free plan), or null. */
  entitlement(appId: string, userId: string): EntitlementView | null {
    const sub = this.store.subscription(appId, userId);
    return entitlementView(appId, userId, sub, (id) => this.store.plan(appId, id));
  }

  /** The one access rule at business time, with the entitlement it read. */
  check(appId: string, userId: string, feature: string) {
    const entitlement = this.entitlement(appId, userId);
    const now = this.clock.now();
    return { ...accessDecision(entitlement, feature, now), now: isoStamp(now), entitlement };
  }

  /** A test user as the simulator answers it. */
  userView(user: UserRecord, appId: string): z.output<typeof TestUser> {
    const sub = this.store.subscription(appId, user.id);
    const ent = this.entitlement(appId, user.id);
    return {
      id: user.id,
      email: user.email,
      name: user.name,
      app_id: user.app_id,
      plan: sub?.plan ?? null,
      status: sub?.status ?? null,
      expires_at: ent?.expires_at ?? null,
      cancelled_at: ent?.cancelled_at ?? null,
      payment_behaviour: this.store.paymentBehaviour(appId, user.id),
      usage: ent?.usage ?? null,
      // What a revocation takes away (and says in user.revoked): `mkt trigger --dry-run` shows it.
      scopes: this.grantedScopes(appId, user.id),
    };
  }

  /** The app's test user `userId`, or a 404 saying how to list them. */
  testUser(app: AppRecord, userId: string): UserRecord {
    const user = this.core.ledger.user(userId);
    if (!user || user.app_id !== app.id) {
      throw new SandboxApiError(404, 'not_found', `No test user "${userId}" on app "${app.id}".`);
    }
    return user;
  }

  private livePlan(app: AppRecord, planId: string) {
    const plan = this.store.plan(app.id, planId);
    if (!plan) {
      throw new SandboxApiError(404, 'not_found', `No plan "${planId}" on app "${app.id}".`);
    }
    if (plan.archived)
      throw new SandboxApiError(
        409,
        'plan_archived',
        `Plan "${planId}" is archived and takes no new subscribers.`,
      );
    return plan;
  }

  /** Runs a billing step, turning its refusals into API errors, and sends what it sends. */
  private enact(step: () => Transition): { transition: Transition; sent: Promise<EmitResult[]> } {
    let transition: Transition;
    try {
      transition = step();
    } catch (e) {
      throw apiError(e);
    }
    return { transition, sent: this.send(transition) };
  }

  /** `POST /simulator/users`: a test user subscribed by the *subscribe* transition. */
  createUser(
    app: AppRecord,
    input: {
      plan: string;
      trial_days?: number;
      payment_behaviour?: PaymentBehaviour;
      status?: SubStatus;
      email?: string;
      name?: string;
      /** Send `subscription.created` for a free plan too (the simulator enacting that event). */
      announce?: boolean;
    },
  ): { user: UserRecord; transition: Transition; sent: Promise<EmitResult[]> } {
    this.catchUp(); // what fell due stays done, whatever happens to this change
    return this.core.ledger.atomic(() => {
      const plan = this.livePlan(app, input.plan);
      const at = this.clock.now();
      const id = randomId('usr', 8);
      if (input.payment_behaviour) this.store.setPaymentBehaviour(app.id, id, input.payment_behaviour);
      const first = this.enact(() =>
        subscribe(this.store, {
          plan,
          user_id: id,
          at,
          trial_days: input.trial_days,
          announce: input.announce,
        }),
      );
      const user: UserRecord = {
        id,
        email: input.email ?? `${id}@sandbox.test`,
        name: input.name ?? `Test User ${id.slice(-4)}`,
        app_id: app.id,
        created_at: isoStamp(this.core.now()),
      };
      this.core.ledger.commit({ op: 'user', v: user });
      const sends = [first.sent];
      if (input.status !== undefined && input.status !== first.transition.to) {
        const status = input.status;
        sends.push(
          this.enact(() => forceStatus(this.store, { app_id: app.id, user_id: id, status, at })).sent,
        );
      }
      return { user, transition: first.transition, sent: Promise.all(sends).then((r) => r.flat()) };
    });
  }

  /** `PATCH /simulator/users/{id}`: payment behaviour, a plan change, a forced status (in that order). */
  updateUser(
    app: AppRecord,
    userId: string,
    input: { plan?: string; payment_behaviour?: PaymentBehaviour; status?: SubStatus; announce?: boolean },
  ) {
    this.catchUp(); // what fell due stays done, whatever happens to this change
    return this.core.ledger.atomic(() => {
      const user = this.testUser(app, userId);
      if (input.payment_behaviour) this.store.setPaymentBehaviour(app.id, user.id, input.payment_behaviour);
      const at = this.clock.now();
      const steps: Array<ReturnType<Life['enact']>> = [];
      if (input.plan !== undefined) {
        const plan = this.livePlan(app, input.plan);
        steps.push(this.enact(() => changePlan(this.store, app.id, user.id, plan, at, input.announce)));
      }
      if (input.status !== undefined) {
        const status = input.status;
        steps.push(
          this.enact(() => forceStatus(this.store, { app_id: app.id, user_id: user.id, status, at })),
        );
      }
      const sent = Promise.all(steps.map((s) => s.sent)).then((r) => r.flat());
      return { user, transitions: steps.map((s) => s.transition), sent };
    });
  }

  /** `POST /simulator/users/{id}/cancel`. */
  cancelUser(app: AppRecord, userId: string) {
    this.catchUp(); // what fell due stays done, whatever happens to this change
    return this.core.ledger.atomic(() => {
      const user = this.testUser(app, userId);
      return { user, ...this.enact(() => cancel(this.store, app.id, user.id, this.clock.now())) };
    });
  }

  /** `POST /simulator/users/{id}/revoke`: the user removes the app; every token dies, streams close. */
  revokeUser(
    app: AppRecord,
    userId: string,
  ): { user: UserRecord; scopes: Scope[]; tokens: number; sent: Promise<EmitResult> } {
    return this.core.ledger.atomic(() => {
      const user = this.testUser(app, userId);
      const tokens = this.store.userTokens(app.id, user.id);
      const scopes = this.grantedScopes(app.id, user.id);
      // Each removal ends the streams its grant opened (src/sandbox/kernel/streams.ts).
      for (const t of tokens) this.core.ledger.commit({ op: 'token-', token: t.token });
      const sent = this.core.deliveries.emit(app, 'user.revoked', {
        user_id: user.id,
        app_id: app.id,
        scopes,
      });
      return { user, scopes, tokens: tokens.filter((t) => t.kind !== 'spent').length, sent };
    });
  }

  /** The scopes the user's tokens for the app carry (spent ones too), sorted. */
  grantedScopes(appId: string, userId: string): Scope[] {
    const tokens = this.store.userTokens(appId, userId);
    return [...new Set(tokens.flatMap((t) => t.scopes))].sort() as Scope[];
  }

  /** The app's oldest test user whose subscription can be cancelled, if any. */
  firstCancellable(appId: string): string | undefined {
    return this.store.firstCancellable(appId);
  }

  /** A new connect link for the app's payment account. */
  startConnect(appId: string): ConnectLink {
    const now = this.core.now();
    for (const [id, l] of this.links) if (Date.parse(l.expires_at) <= now) this.links.delete(id);
    const link = {
      id: randomId('lnk', 16),
      app_id: appId,
      csrf: randomId('csrf', 16),
      expires_at: isoStamp(now + CONNECT_TTL_MS),
    };
    this.links.set(link.id, link);
    return link;
  }

  /** The live connect link `id`, if any. */
  connectLink(id: string): ConnectLink | undefined {
    const link = this.links.get(id);
    return link && Date.parse(link.expires_at) > this.core.now() ? link : undefined;
  }

  /** Spends the connect link when the form carries its anti-CSRF token. */
  takeConnectLink(id: string, csrf: string): ConnectLink | undefined {
    const link = this.connectLink(id);
    if (!link || !secretsEqual(csrf, link.csrf)) return undefined;
    this.links.delete(id);
    return link;
  }

  /** Links a new test account to the app (an app linked before keeps its account); answers the account. */
  linkPayouts(appId: string): string {
    this.store.linkPayouts(appId, randomId('acct', 8), isoStamp(this.clock.now()));
    return this.store.payouts(appId)!.account_id;
  }

  /** Counts a request made with a user's access token (whatever its answer). */
  countCall(appId: string, userId: string): void {
    this.store.countCall(appId, userId);
  }
}
