import { isoStamp, randomId } from '../ids.js';
import type { AppRecord, DeliveryRecord, PendingDelivery } from '../storage/records.js';
import type { Ledger } from '../storage/ledger.js';
import type { Relay } from './fanout.js';
import { signBody } from '../../../wire/signing.js';
import { envelopeBody, outboundHeaders } from '../../../wire/delivery.js';
import { postDelivery } from './post.js';

/** The outcome of the first attempt, as answered by `POST /simulator/events`. */
export interface FirstAttempt {
  url: string | null;
  status: 'delivered' | 'failed' | 'no_url';
  response_status: number | null;
  error: string | null;
}

/** A created delivery, its envelope, the first attempt and how many relay listeners got it. */
export interface EmitResult {
  delivery: DeliveryRecord;
  envelope: { event: string; timestamp: string; data: unknown };
  webhook: FirstAttempt;
  listeners: number;
}

/**
 * How many POSTs nobody waits for (events the sandbox causes itself, retries) are in flight at once.
 * A year's advance causes hundreds of deliveries in one request: they reach the developer's server a
 * few at a time, in order, and the sandbox's event loop stays free to answer (the advance's own 30 MB
 * answer among them). A POST a request waits for (a triggered event, a resend) goes at once.
 */
const MAX_IN_FLIGHT = 8;
/**
 * How many of those places one destination (a webhook URL) may hold: a receiver that hangs keeps
 * at most these, and every other app's and URL's deliveries go on through the rest.
 */
export const MAX_PER_DESTINATION = 4;

/** The clock, the retry schedule and where to log attempts. */
export interface DeliveryOptions {
  now: () => number;
  backoffMs: number[];
  timeoutMs: number;
  log: (line: string) => void;
}

/**
 * Creates, signs and sends webhook deliveries and retries failures with backoff. A delivery and the
 * attempt it still owes are logged before anything is sent (docs/DECISIONS.md §2, durability), so
 * after a crash every pending delivery is resumed on its schedule and no sequence number is reused.
 */
export class Deliveries {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<AbortController>();
  /**
   * Background POSTs waiting for one of the {@link MAX_IN_FLIGHT} places, first come first served
   * among those whose destination holds fewer than {@link MAX_PER_DESTINATION}. Besides the shared
   * places, each app has a lane of its own: an app with no POST in flight sends at once, so that
   * receivers that hang (holding every shared place) never hold up another app's delivery.
   */
  private readonly waiting: Array<{ url: string; app: string; go: () => void }> = [];
  private posting = 0;
  private readonly perDestination = new Map<string, number>();
  /** Background POSTs in flight per app: an app with none may always send one (its own lane). */
  private readonly perApp = new Map<string, number>();
  private closed = false;

  constructor(
    private readonly store: Ledger,
    private readonly relay: Relay,
    private readonly options: DeliveryOptions,
  ) {}

  /** Schedules every delivery still owed from an earlier run. */
  resume(): void {
    for (const p of this.store.allPending()) this.schedule(p);
  }

  /**
   * Creates a delivery for `event` (logged at once, so the caller's commit covers it); once it is on
   * disk, offers it to listeners and makes the first webhook attempt.
   */
  emit(
    app: AppRecord,
    event: string,
    data: unknown,
    options: { synthetic?: boolean; background?: boolean } = {},
  ): Promise<EmitResult> {
    const envelope = { event, timestamp: isoStamp(this.options.now()), data };
    const body = envelopeBody(event, envelope.timestamp, data);
    const delivery: DeliveryRecord = {
      seq: this.store.nextSeq(app.id),
      id: randomId('dlv', 12),
      app_id: app.id,
      event,
      created_at: envelope.timestamp,
      body,
      signature: signBody(app.webhook_secret, body),
      ...(options.synthetic ? { simulated: 'synthetic' as const } : {}),
    };
    this.store.addDelivery(delivery);
    const url = app.webhook_url;
    const pending: PendingDelivery | undefined =
      url === null ? undefined : { delivery, url, attempt: 1, due_at: this.options.now() };
    if (pending) this.store.commit({ op: 'pending', v: pending });
    // One turn after the commit: the request that caused the delivery answers first (a year's
    // advance that causes hundreds is not held up by their sending).
    const durable = this.store.sync().then(() => new Promise<void>((resolve) => setImmediate(resolve)));
    const sent = durable.then(async () => {
      // A request that failed after making it rolled it back (GroupCommit.atomic): nothing to send.
      if (this.store.delivery(app.id, delivery.seq)?.id !== delivery.id) {
        throw new Error(`Delivery ${delivery.id} was rolled back with the request that made it.`);
      }
      const h = this.store.history(app.id);
      h.offeredSeq = Math.max(h.offeredSeq, delivery.seq);
      const listeners = this.relay.offer(delivery);
      if (!pending) {
        this.options.log(`delivery ${delivery.id} ${event} (no webhook url) listeners=${listeners}`);
        const webhook: FirstAttempt = { url: null, status: 'no_url', response_status: null, error: null };
        return { delivery, envelope, listeners, webhook };
      }
      return {
        delivery,
        envelope,
        listeners,
        webhook: await this.attempt(pending, options.background === true),
      };
    });
    sent.catch(() => {}); // the caller hears it; a request that failed does not wait for it
    return sent;
  }

  /** Emits without waiting for the first attempt (events the sandbox causes itself). */
  emitInBackground(app: AppRecord, event: string, data: unknown): void {
    this.emit(app, event, data, { background: true }).catch((e: unknown) =>
      this.options.log(`delivery failed: ${String(e)}`),
    );
  }

  private async attempt(p: PendingDelivery, background: boolean): Promise<FirstAttempt> {
    const d = p.delivery;
    const result = await this.post(p.url, d, outboundHeaders(d), d.body, background);
    this.options.log(
      `delivery ${d.id} ${d.event} attempt ${p.attempt} -> ${p.url} ${result.response_status ?? result.error}`,
    );
    // It reads what it writes: while the clock is being advanced, after the advance.
    await this.store.idle();
    // Stopping mid-attempt leaves the delivery pending: the next start sends it again.
    if (this.closed || this.store.pending(d.id) === undefined) return result;
    const wait = this.options.backoffMs[p.attempt - 1];
    if (result.status === 'delivered' || wait === undefined) {
      this.store.commit({ op: 'pending-', id: d.id });
    } else {
      const next = { ...p, attempt: p.attempt + 1, due_at: this.options.now() + wait };
      this.store.commit({ op: 'pending', v: next });
      this.schedule(next);
    }
    return result;
  }

  /**
   * One POST of a delivery, recorded as its next attempt (time, status or error, latency, the start
   * of the answer) for the console and `GET /apps/{id}/deliveries/{dlv}`.
   */
  private async post(
    url: string,
    d: DeliveryRecord,
    headers: Record<string, string>,
    body: string,
    background: boolean,
  ): Promise<FirstAttempt> {
    // A place is handed from the POST that ends to the first one waiting; close() wakes the waiting
    // without one.
    if (background) {
      if (this.hasPlace(url, d.app_id)) this.take(url, d.app_id);
      else await new Promise<void>((resolve) => this.waiting.push({ url, app: d.app_id, go: resolve }));
      if (this.closed) return { url, status: 'failed', response_status: null, error: 'the sandbox stopped' };
    }
    const controller = new AbortController();
    this.inFlight.add(controller);
    const timer = setTimeout(() => controller.abort(), this.options.timeoutMs);
    const outcome = await postDelivery({
      url,
      headers,
      body,
      signal: controller.signal,
      now: this.options.now,
    });
    clearTimeout(timer);
    this.inFlight.delete(controller);
    if (background) this.release(url, d.app_id);
    const status = outcome.response_status;
    const ok = status !== null && status >= 200 && status < 300;
    const error =
      status !== null
        ? ok
          ? null
          : `HTTP ${status}`
        : controller.signal.aborted
          ? `no answer within ${this.options.timeoutMs} ms`
          : describe(outcome.error);
    await this.store.idle();
    // Stopped meanwhile: the attempt is not recorded (the delivery stays pending for the next start).
    if (this.closed) return { url, status: 'failed', response_status: status, error: 'the sandbox stopped' };
    const last = this.store
      .sql('SELECT COALESCE(MAX(attempt), 0) AS n FROM delivery_attempts WHERE delivery_id = ?')
      .get(d.id) as { n: number };
    this.store.recordAttempt({
      delivery_id: d.id,
      attempt: Number(last.n) + 1,
      at: outcome.at,
      url,
      response_status: status,
      error,
      latency_ms: outcome.latency_ms,
      response_excerpt: outcome.response_excerpt,
    });
    return { url, status: ok ? 'delivered' : 'failed', response_status: status, error };
  }

  private hasPlace(url: string, app: string): boolean {
    if ((this.perDestination.get(url) ?? 0) >= MAX_PER_DESTINATION) return false;
    return this.posting < MAX_IN_FLIGHT || !this.perApp.has(app);
  }

  private take(url: string, app: string): void {
    this.posting++;
    this.perDestination.set(url, (this.perDestination.get(url) ?? 0) + 1);
    this.perApp.set(app, (this.perApp.get(app) ?? 0) + 1);
  }

  /** Gives the place back, and hands free places to the first waiting POSTs whose destination has room. */
  private release(url: string, app: string): void {
    this.posting--;
    countDown(this.perDestination, url);
    countDown(this.perApp, app);
    for (let i = 0; i < this.waiting.length;) {
      const w = this.waiting[i]!;
      if (!this.hasPlace(w.url, w.app)) i++;
      else {
        this.waiting.splice(i, 1);
        this.take(w.url, w.app);
        w.go();
      }
    }
  }

  /**
   * Sends a delivery again to the app's webhook URL now: the same id, event and data, a fresh
   * envelope timestamp and signature. A success ends the retries still scheduled for it.
   */
  async resend(app: AppRecord & { webhook_url: string }, d: DeliveryRecord): Promise<FirstAttempt> {
    const envelope = JSON.parse(d.body) as { event: string; data: unknown };
    const body = envelopeBody(envelope.event, isoStamp(this.options.now()), envelope.data);
    const fresh = { ...d, body, signature: signBody(app.webhook_secret, body) };
    const result = await this.post(app.webhook_url, d, outboundHeaders(fresh), body, false);
    this.options.log(
      `delivery ${d.id} ${d.event} resent -> ${app.webhook_url} ${result.response_status ?? result.error}`,
    );
    if (result.status === 'delivered' && this.store.pending(d.id) !== undefined) {
      this.store.commit({ op: 'pending-', id: d.id });
    }
    return result;
  }

  private schedule(p: PendingDelivery): void {
    if (this.closed) return;
    const wait = Math.max(0, p.due_at - this.options.now());
    const timer = setTimeout(async () => {
      this.timers.delete(timer);
      await this.store.idle();
      // The app may have been deleted, or the delivery finished, since.
      const now = this.store.pending(p.delivery.id);
      if (!this.closed && now?.attempt === p.attempt && now.due_at === p.due_at) void this.attempt(p, true);
    }, wait);
    this.timers.add(timer);
  }

  /** Stops retries and in-flight attempts; what is still owed stays pending for the next start. */
  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const controller of this.inFlight) controller.abort();
    for (const w of this.waiting.splice(0)) w.go();
  }
}

function countDown(counts: Map<string, number>, key: string): void {
  const left = counts.get(key)! - 1;
  if (left === 0) counts.delete(key);
  else counts.set(key, left);
}

/** Why a POST got no answer: the system's code (`ECONNREFUSED`) when there is one. */
function describe(e: unknown): string {
  if (e instanceof Error) return (e as Error & { code?: string }).code ?? e.message;
  return String(e);
}
