import { HEADER } from '../../wire.js';
import { redactUrl } from '../../api/redact.js';
import { isoTime, type Clock } from '../../platform/clock.js';
import { isUtf8 } from 'node:buffer';
import { IdTable } from '../id-table.js';
import {
  forJournal,
  type DeliveryLog,
  type DeliverySource,
  type JournalRecord,
  type ReceivedRecord,
} from '../journal.js';
import { checkDelivery, signatureKey, type CheckResult, type RefusalReason } from '../signature.js';
import { deliveryReport, type DeliveryReport, type ListenEvent } from './events.js';
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
  /** Given each delivery journaled for forwarding (with --forward-to), before its verdict. */
  forward?(job: Job): void;
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

/** What became of one delivery: `pending` when it was journaled and handed to `forward`. */
export type Verdict =
  | { status: 'refused'; reason: RefusalReason; message: string }
  | { status: 'duplicate' | 'filtered' | 'received' | 'pending' };

const DUPLICATE: Verdict = { status: 'duplicate' };
const FILTERED: Verdict = { status: 'filtered' };
const RECEIVED: Verdict = { status: 'received' };
const PENDING: Verdict = { status: 'pending' };

/**
 * The journal record of a delivery as it arrived: always the same fields in the same order (one
 * shape for the engine); those left undefined are not written.
 */
function receivedRecord(
  input: Arrival,
  at: string,
  event: string | undefined,
  forwardTo: string | undefined,
): ReceivedRecord {
  const utf8 = isUtf8(input.body);
  return {
    t: 'received',
    id: input.id,
    at,
    source: input.source,
    seq: input.seq,
    event,
    headers: input.headers,
    body: utf8 ? input.body.toString('utf8') : undefined,
    body_b64: utf8 ? undefined : input.body.toString('base64'),
    forward_to: forwardTo,
  };
}

/** The bytes of a request's headers as they came (names and values): a refused one is counted whole. */
function headerBytes(headers: Record<string, string>): number {
  let n = 0;
  for (const name in headers) n += name.length + headers[name]!.length + 4;
  return n;
}

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
  private readonly inflight = new IdTable<{ arrival: Arrival; verdict: Promise<Verdict> }>();
  /**
   * Verified bodies being journaled now, by their signature (`signatureKey`): a copy under another
   * id that arrives before the first one is on disk is a replay all the same.
   */
  private readonly signing = new Map<string, { id: string; at: string }>();
  private refreshing: Promise<void> | undefined;
  private lastRefresh = Number.NEGATIVE_INFINITY;

  /** The forward target as journaled: a password in it shown as `***` (kept in the credential store). */
  private readonly forwardLabel: string | undefined;

  constructor(private readonly o: IntakeOptions) {
    this.forwardLabel = o.forwardTo && redactUrl(o.forwardTo.href);
  }

  /** Takes one delivery; rejects when the journal cannot be written (nothing is then remembered). */
  take(input: Arrival): Promise<Verdict> {
    // The same id arriving again while it is being taken waits for the earlier one's outcome.
    const before = this.inflight.get(input.id);
    const decide = this.decider(input);
    const verdict = before ? before.verdict.then(decide, decide) : decide();
    this.inflight.set(input.id, { arrival: input, verdict });
    return verdict;
  }

  /** `decide(input)`, a rejected promise should it throw. */
  private decider(input: Arrival): () => Promise<Verdict> {
    return () => {
      try {
        return this.decide(input);
      } catch (err) {
        return Promise.reject(err as Error);
      }
    };
  }

  /** Called once the outcome of `input` is known (and on disk): a later arrival of its id is decided anew. */
  private release(input: Arrival): void {
    if (this.inflight.get(input.id)?.arrival === input) this.inflight.delete(input.id);
  }

  private decide(input: Arrival): Promise<Verdict> {
    const started = this.o.clock.now();
    const check = this.check(input, started);
    if (!check.ok && check.reason === 'bad_signature' && this.o.secret.fetch)
      return this.decideAfterRefresh(input, started);
    return this.conclude(input, started, check);
  }

  /** Perhaps the secret was rotated: reads the current one (rate-limited) and checks again. */
  private async decideAfterRefresh(input: Arrival, started: number): Promise<Verdict> {
    await this.refreshSecret();
    return this.conclude(input, started, this.check(input, started));
  }

  /** Journals what `decision` says, then settles it; the id is released either way. */
  private conclude(input: Arrival, started: number, check: CheckResult): Promise<Verdict> {
    const { write, written, settle } = this.decision(input, started, check);
    if (!write) {
      this.release(input);
      return Promise.resolve(settle());
    }
    return this.o.journal.append(...write).then(
      () => {
        written?.(); // the journal answers for its signature from now on
        this.release(input);
        return settle();
      },
      (err: unknown) => {
        written?.(); // not on disk: not remembered
        this.release(input);
        throw err;
      },
    );
  }

  /** What to journal for a checked delivery, and what to report once that is on disk. */
  private decision(
    input: Arrival,
    started: number,
    check: CheckResult,
  ): { write?: JournalRecord[]; written?(): void; settle(): Verdict } {
    const { journal, emit } = this.o;
    const at = isoTime(started);
    const record = receivedRecord(input, at, check.envelope?.event, this.forwardLabel);
    const known = journal.statusOf(input.id);
    const verified = known !== undefined && known !== 'refused';
    if (!check.ok) {
      const { reason, message } = check;
      record.forward_to = undefined;
      return {
        // Refused bytes stay in the journal for `resend` (which verifies again), unless the id
        // belongs to a verified delivery: a forgery of it is not worth keeping.
        // Only a sample of them (journal.keepRefused): a flood of refused requests is counted, not kept.
        write:
          verified || !journal.keepRefused(input.body.length + headerBytes(input.headers))
            ? undefined
            : [forJournal(record), { t: 'status', id: record.id, at, status: 'refused', reason }],
        settle: () => {
          const report = deliveryReport(record, at, 'refused', SIGNATURE_NAMES[reason]);
          report.reason = reason;
          emit({ type: 'refused', report });
          return { status: 'refused', reason, message };
        },
      };
    }
    const key = signatureKey(input.headers[HEADER.signature]!);
    const replayOf = journal.signedBy(key) ?? this.signing.get(key);
    const replayed =
      replayOf !== undefined &&
      replayOf.id !== input.id &&
      Math.abs(started - Date.parse(replayOf.at)) <= this.o.toleranceSeconds * 1000;
    if (verified || replayed) {
      if (input.seq !== undefined && input.seq > (journal.lastSeq ?? -1)) journal.lastSeq = input.seq;
      return {
        settle: () => {
          const report = deliveryReport(record, at, 'duplicate');
          report.reason = replayed ? `same body as ${replayOf.id}` : null;
          emit({ type: 'duplicate', report });
          return DUPLICATE;
        },
      };
    }
    const events = this.o.events;
    const history =
      input.historyBefore !== undefined && Date.parse(check.envelope.timestamp) < input.historyBefore;
    if (history || (events && events.size > 0 && !events.has(check.envelope.event))) {
      const reason = history ? 'history' : 'event_filter';
      record.forward_to = undefined;
      return {
        write: [forJournal(record), { t: 'status', id: record.id, at, status: 'filtered', reason }],
        settle: () => {
          const report = deliveryReport(record, at, 'filtered');
          report.reason = reason;
          emit({ type: 'filtered', report });
          return FILTERED;
        },
      };
    }
    this.signing.set(key, { id: input.id, at });
    const written = () => {
      if (this.signing.get(key)?.id === input.id) this.signing.delete(key);
    };
    return {
      // Credential headers redacted in the journal; the forwarder gets them as they came.
      write: [forJournal(record)],
      written,
      settle: () => {
        // Journaled: forwarded next (the forwarder reports the outcome), or that is all.
        if (this.o.forward) {
          this.o.forward({ record, body: input.body, started });
          return PENDING;
        }
        emit({ type: 'verified', report: deliveryReport(record, at, 'received') });
        return RECEIVED;
      },
    };
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
}
