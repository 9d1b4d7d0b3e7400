import { HEADER } from '../../wire.js';
import type { Clock } from '../../platform/clock.js';
import { bodyFields, type DeliveryLog, type DeliverySource, type ReceivedRecord } from '../journal.js';
import { checkDelivery, type CheckResult, type RefusalReason } from '../signature.js';
import type { DeliveryReport, ListenEvent } from './events.js';
import type { Job } from './forwarder.js';

/** The signing secret in use, and (unless it was given explicitly) a way to read the current one. */
export interface SecretSource {
  current: string;
  /** The app's current secret from the marketplace; absent for a secret given explicitly. */
  fetch?(): Promise<string>;
}

/** Settings of the intake. */
export interface IntakeOptions {
  journal: DeliveryLog;
  clock: Clock;
  secret: SecretSource;
  /** Replay window in seconds: the local receiver's timestamps, and replayed bodies under a new id. */
  toleranceSeconds: number;
  /** At most one secret fetch per this many ms after a signature fails. */
  secretRefreshMs?: number;
  events?: Set<string>;
  forwardTo?: URL;
  emit(event: ListenEvent): void;
}

/** One delivery as it arrived. */
export interface Arrival {
  source: DeliverySource;
  seq?: number;
  id: string;
  headers: Record<string, string>;
  body: Buffer;
  /** Relay deliveries older than this are history: journaled, not forwarded (a server without positions). */
  historyBefore?: number;
}

/** What became of one delivery; `forward` is set when it was journaled for forwarding. */
export type Verdict =
  | { status: 'refused'; reason: RefusalReason; message: string }
  | { status: 'duplicate' | 'filtered' | 'received' }
  | { status: 'pending'; forward: Job };

const SIGNATURE_NAMES: Partial<Record<RefusalReason, DeliveryReport['signature']>> = {
  missing_signature: 'missing',
  malformed_signature: 'malformed',
  bad_signature: 'invalid',
};

/**
 * Verifies, de-duplicates and journals deliveries. Only what verified and reached the disk counts
 * for de-duplication: a forged request never takes a genuine delivery's id, a failed journal write
 * is never remembered, and a verified body replayed under a new id inside the window is a duplicate.
 */
export class Intake {
  private readonly inflight = new Map<string, Promise<Verdict>>();
  private refreshing: Promise<void> | undefined;
  private lastRefresh = Number.NEGATIVE_INFINITY;

  constructor(private readonly o: IntakeOptions) {}

  /** Takes one delivery; rejects when the journal cannot be written (nothing is then remembered). */
  take(input: Arrival): Promise<Verdict> {
    // The same id arriving again while it is being taken waits for the earlier one's outcome.
    const before = this.inflight.get(input.id);
    const decide = () => this.decide(input);
    const work = before ? before.then(decide, decide) : decide();
    this.inflight.set(input.id, work);
    const forget = () => {
      if (this.inflight.get(input.id) === work) this.inflight.delete(input.id);
    };
    work.then(forget, forget);
    return work;
  }

  private async decide(input: Arrival): Promise<Verdict> {
    const { journal, clock } = this.o;
    const started = clock.now();
    const at = new Date(started).toISOString();
    const record: ReceivedRecord = {
      t: 'received',
      id: input.id,
      at,
      source: input.source,
      ...(input.seq !== undefined ? { seq: input.seq } : {}),
      headers: input.headers,
      ...bodyFields(input.body),
    };
    let check = this.check(input, started);
    if (!check.ok && check.reason === 'bad_signature' && this.o.secret.fetch) {
      // Perhaps the secret was rotated: read the current one (rate-limited) and check again.
      const used = this.o.secret.current;
      await this.refreshSecret();
      if (this.o.secret.current !== used) check = this.check(input, started);
    }
    if (check.envelope) record.event = check.envelope.event;
    const report = this.report(record, check.ok ? 'valid' : (SIGNATURE_NAMES[check.reason] ?? 'valid'), at);
    const known = journal.statusOf(input.id);
    const verified = known !== undefined && known !== 'refused';
    if (!check.ok) {
      // Refused bytes stay in the journal for `resend` (which verifies again), unless the id
      // belongs to a verified delivery: a forgery of it is not worth keeping.
      if (!verified)
        await journal.append(record, {
          t: 'status',
          id: record.id,
          at,
          status: 'refused',
          reason: check.reason,
        });
      this.o.emit({ type: 'refused', report: { ...report, status: 'refused', reason: check.reason } });
      return { status: 'refused', reason: check.reason, message: check.message };
    }
    const replayOf = journal.digestOf(record.digest!);
    const replayed =
      replayOf !== undefined &&
      replayOf.id !== input.id &&
      Math.abs(started - replayOf.at) <= this.o.toleranceSeconds * 1000;
    if (verified || replayed) {
      if (input.seq !== undefined && input.seq > (journal.lastSeq ?? -1)) journal.lastSeq = input.seq;
      const reason = replayed ? `same body as ${replayOf.id}` : null;
      this.o.emit({ type: 'duplicate', report: { ...report, status: 'duplicate', reason } });
      return { status: 'duplicate' };
    }
    const events = this.o.events;
    const history =
      input.historyBefore !== undefined && Date.parse(check.envelope.timestamp) < input.historyBefore;
    if (history || (events && events.size > 0 && !events.has(check.envelope.event))) {
      const reason = history ? 'history' : 'event_filter';
      await journal.append(record, { t: 'status', id: record.id, at, status: 'filtered', reason });
      this.o.emit({ type: 'filtered', report: { ...report, status: 'filtered', reason } });
      return { status: 'filtered' };
    }
    if (this.o.forwardTo) record.forward_to = this.o.forwardTo.href;
    await journal.append(record);
    this.o.emit({ type: 'verified', report });
    if (!this.o.forwardTo) return { status: 'received' };
    return { status: 'pending', forward: { record, body: input.body, report, started } };
  }

  /** Checks the bytes against the secret in use. */
  private check(input: Arrival, now: number): CheckResult {
    return checkDelivery({
      secret: this.o.secret.current,
      body: input.body,
      signature: input.headers[HEADER.signature],
      now,
      // The relay replays missed deliveries on purpose over an authenticated channel; the replay
      // window protects the local receiver, which anyone on this machine can reach.
      toleranceSeconds: input.source === 'local' ? this.o.toleranceSeconds : undefined,
    });
  }

  /** Reads the current secret, at most once per `secretRefreshMs`; concurrent callers share it. */
  private refreshSecret(): Promise<void> {
    if (this.refreshing) return this.refreshing;
    if (this.o.clock.now() - this.lastRefresh < (this.o.secretRefreshMs ?? 10_000)) return Promise.resolve();
    this.refreshing = this.o.secret.fetch!().then(
      (secret) => {
        const changed = secret !== this.o.secret.current;
        this.o.secret.current = secret;
        this.o.emit({ type: 'secret_refreshed', changed });
      },
      (err: Error) => this.o.emit({ type: 'warning', message: `Reading the signing secret: ${err.message}` }),
    );
    void this.refreshing.finally(() => {
      this.refreshing = undefined;
      this.lastRefresh = this.o.clock.now();
    });
    return this.refreshing;
  }

  /** A report of `record` for the events. */
  report(
    record: ReceivedRecord,
    signature: DeliveryReport['signature'],
    time = new Date(this.o.clock.now()).toISOString(),
  ): DeliveryReport {
    return {
      time,
      id: record.id,
      event: record.event ?? record.headers[HEADER.event] ?? null,
      source: record.source,
      seq: record.seq ?? null,
      signature,
      status: 'received',
      response_status: null,
      attempts: 0,
      reason: null,
      latency_ms: null,
    };
  }
}
