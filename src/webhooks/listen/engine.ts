import type { StreamResponse } from '../../api/transport.js';
import { redactUrl } from '../../api/redact.js';
import type { Clock } from '../../platform/clock.js';
import { bodyBytes, type DeliveryLog } from '../journal.js';
import { RelayConnection } from '../relay.js';
import type { ListenEvent } from './events.js';
import { Forwarder, type Job } from './forwarder.js';
import { Intake, type SecretSource } from './intake.js';
import { startReceiver, type Receiver } from './receiver.js';
import type { RetryPolicy } from './retry-policy.js';

/** The longest a local delivery waits for the forward backlog to go down before it is taken. */
const ADMIT_WAIT_MS = 1_000;

/** Settings of the listen engine. */
export interface EngineOptions {
  journal: DeliveryLog;
  clock: Clock;
  secret: SecretSource;
  /** Replay window in seconds for the local receiver. */
  toleranceSeconds: number;
  /** The relay stream (its address, and how to open it); undefined with --no-relay. */
  relay?: {
    label: string;
    open(headers: Record<string, string>, signal: AbortSignal): Promise<StreamResponse>;
  };
  /** Local receiver port (0: any); undefined for no local receiver. */
  port?: number;
  host?: string;
  forwardTo?: URL;
  /** Event kinds to keep; empty or undefined: all. */
  events?: Set<string>;
  retry: RetryPolicy;
  forwardTimeoutMs?: number;
  /** Forwards in flight at once. */
  concurrency?: number;
  /**
   * Deliveries waiting to be forwarded at which the relay stream pauses and local deliveries wait;
   * default two per forward slot, at least 32.
   */
  highWaterMark?: number;
  relayIdleTimeoutMs?: number;
  relayBackoffMs?: number;
  /** On a first connection without a known position, how long to wait for the relay's position. */
  relayPositionWaitMs?: number;
  resendHint(id: string): string;
  emit(event: ListenEvent): void;
  /** While the output cannot keep up, a promise of when it can: nothing more is read meanwhile. */
  backlog?(): Promise<void> | undefined;
}

/**
 * `mkt webhooks listen`'s engine: deliveries from the relay stream and the local receiver go through
 * the intake (verify, de-duplicate, journal) to the forwarder; start, stop and the relay position.
 */
export class ListenEngine {
  private receiver: Receiver | undefined;
  private relay: RelayConnection | undefined;
  private readonly intake: Intake;
  private readonly forwarder: Forwarder | undefined;
  private stopping = false;
  /**
   * Only for a server that sends no position event and replays its whole history to a client without
   * Last-Event-ID: on a first run, relay deliveries older than this are history, journaled, not
   * forwarded. Cleared as soon as the relay tells us its position.
   */
  private historyBefore: number | undefined;
  /** Local deliveries waiting for the backlog to go down. */
  private readonly waiting = new Set<() => void>();
  /** Relay deliveries being taken (stop waits for them). */
  private readonly taking = new Set<Promise<unknown>>();
  /** Set while the output is behind: resolves once it caught up. */
  private outputWait: Promise<void> | undefined;

  constructor(private readonly o: EngineOptions) {
    this.intake = new Intake({
      journal: o.journal,
      clock: o.clock,
      secret: o.secret,
      toleranceSeconds: o.toleranceSeconds,
      events: o.events,
      forwardTo: o.forwardTo,
      forward: o.forwardTo ? (job) => this.forward(job) : undefined,
      emit: o.emit,
    });
    if (o.forwardTo) {
      this.forwarder = new Forwarder({
        target: o.forwardTo,
        journal: o.journal,
        clock: o.clock,
        policy: o.retry,
        concurrency: o.concurrency ?? 8,
        timeoutMs: o.forwardTimeoutMs,
        secret: () => o.secret.current,
        resendHint: o.resendHint,
        emit: o.emit,
        drained: () => {
          if (this.forwarder!.backlog >= this.highWater / 2) return;
          this.throttle();
          if (!this.outputWait) for (const admit of this.waiting) admit();
        },
      });
    }
  }

  private get highWater(): number {
    return this.o.highWaterMark ?? Math.max(32, 2 * (this.o.concurrency ?? 8));
  }

  /** True while the output is behind (and arranges to look again once it caught up). */
  private outputBehind(): boolean {
    if (this.outputWait) return true;
    const wait = this.o.backlog?.();
    if (!wait) return false;
    this.outputWait = wait.then(() => {
      this.outputWait = undefined;
      this.throttle();
      for (const admit of this.waiting) admit();
    });
    return true;
  }

  /**
   * Pauses the relay stream while anything downstream is behind (deliveries being journaled, the
   * forward backlog, the output), and resumes it once all are at half their mark: memory stays
   * bounded whatever the relay sends and however slow the reader of our output.
   */
  private throttle(): void {
    if (!this.relay) return;
    const backlog = this.forwarder?.backlog ?? 0;
    const behind = this.outputBehind();
    if (behind || this.taking.size >= this.highWater || backlog >= this.highWater) this.relay.pause();
    else if (this.taking.size < this.highWater / 2 && backlog < this.highWater / 2) this.relay.resume();
  }

  /**
   * Resolves when a local delivery may be taken: at once, or (while the backlog is at its high-water
   * mark) once it went down or ADMIT_WAIT_MS passed. A sender faster than the target is slowed down
   * instead of queueing in memory; one that waits long is taken anyway (the journal holds it).
   */
  private admit(): Promise<void> | undefined {
    if (this.stopping) return undefined;
    const full = this.forwarder !== undefined && this.forwarder.backlog >= this.highWater;
    if (!full && !this.outputBehind()) return undefined;
    return new Promise((resolve) => {
      const admit = () => {
        clearTimeout(timer);
        this.waiting.delete(admit);
        resolve();
      };
      const timer = setTimeout(admit, ADMIT_WAIT_MS);
      this.waiting.add(admit);
    });
  }

  /** Starts the receiver and the relay; resolves once both are ready (the relay position known). */
  async start(): Promise<void> {
    if (this.o.port !== undefined) {
      this.receiver = await startReceiver({
        port: this.o.port,
        host: this.o.host,
        stopping: () => this.stopping,
        admit: () => this.admit(),
        take: (arrival) => this.intake.take(arrival),
      });
    }
    const pending = this.forwarder ? this.o.journal.pending() : [];
    for (const record of pending)
      this.forwarder!.push({
        record,
        body: bodyBytes(record),
        started: this.o.clock.now(),
      });
    const resumeAfter = this.o.journal.lastSeq;
    // Without a position the relay stream is opened without Last-Event-ID: the server answers with its
    // position and live deliveries only. A server that replays its whole history instead (no position
    // event) gets the old first-run rule: only what happens from now on is forwarded.
    if (resumeAfter === undefined) this.historyBefore = this.o.clock.now() - 2_000;
    if (this.o.relay) await this.startRelay(this.o.relay);
    this.o.emit({
      type: 'ready',
      receiver: this.receiver?.url ?? null,
      relay: this.o.relay?.label ?? null,
      forward_to: this.o.forwardTo ? redactUrl(this.o.forwardTo.href) : null,
      resume_after: resumeAfter ?? null,
      position: this.o.relay ? (this.o.journal.lastSeq ?? null) : null,
      pending: pending.length,
      journal: this.o.journal.dir,
    });
  }

  /** Queues a journaled delivery; the relay pauses while the backlog is at its high-water mark. */
  private forward(job: Job): void {
    this.forwarder!.push(job);
    this.throttle();
  }

  private startRelay(relay: NonNullable<EngineOptions['relay']>): Promise<void> {
    return new Promise((resolve, reject) => {
      let first = true;
      let waitTimer: NodeJS.Timeout | undefined;
      // Ready once the resume point is known and on disk: what is sent from then on is never lost.
      const ready = () => {
        clearTimeout(waitTimer);
        if (first) resolve();
        first = false;
      };
      this.relay = new RelayConnection(
        {
          open: relay.open,
          resumeAfter: () => this.o.journal.lastSeq,
          idleTimeoutMs: this.o.relayIdleTimeoutMs,
          initialBackoffMs: this.o.relayBackoffMs,
        },
        {
          delivery: (d) => {
            const taken = this.intake
              .take({
                source: 'relay',
                seq: d.seq,
                id: d.id,
                headers: d.headers,
                body: Buffer.from(d.body, 'utf8'),
                historyBefore: this.historyBefore,
              })
              .then(ready, (err: Error) => {
                // Not journaled, so not counted: the relay replays it after a reconnect.
                this.o.emit({
                  type: 'warning',
                  message: `Delivery ${d.id}: ${err.message}; reconnecting to get it again.`,
                });
                this.relay?.reconnect(`the journal could not take ${d.id}`);
              });
            this.taking.add(taken);
            this.throttle();
            void taken.finally(() => {
              this.taking.delete(taken);
              this.throttle();
            });
          },
          position: ({ seq, after }) => {
            const known = this.o.journal.lastSeq;
            if (after === undefined && known === undefined) {
              this.historyBefore = undefined;
            } else if (after !== undefined && seq < after) {
              // Sequence numbers went back: the marketplace (a sandbox) was reset. Resume from its
              // position, or deliveries numbered up to our old one would be skipped.
              this.o.emit({
                type: 'warning',
                message: `The relay is at #${seq}, before our position #${after} (was the marketplace reset?); resuming from #${seq}.`,
              });
            } else return;
            this.o.journal
              .append({ t: 'position', at: new Date(this.o.clock.now()).toISOString(), seq })
              .then(ready, (err: Error) => {
                this.o.emit({ type: 'warning', message: `Journal: ${err.message}` });
                ready();
              });
          },
          connected: (after) => {
            this.o.emit({ type: 'connected', after: after ?? null });
            if (after !== undefined) ready();
            else if (first) waitTimer = setTimeout(ready, this.o.relayPositionWaitMs ?? 1_000);
          },
          reconnecting: (r) =>
            this.o.emit({ type: 'reconnecting', attempt: r.attempt, delay_ms: r.delayMs, error: r.error }),
          fatal: (f) => {
            clearTimeout(waitTimer);
            this.o.emit({ type: 'fatal', message: f.message, status: f.status, hints: f.hints });
            if (first) reject(Object.assign(new Error(f.message), { status: f.status, hints: f.hints }));
            first = false;
          },
          malformed: (message) => this.o.emit({ type: 'warning', message }),
        },
      );
      this.relay.start();
    });
  }

  /**
   * Stops taking deliveries, lets forwards in flight finish and their outcomes reach the journal
   * (waits for retries are cut short: those deliveries are forwarded on the next start), closes it.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const admit of this.waiting) admit();
    this.relay?.stop();
    await this.receiver?.close();
    await Promise.all(this.taking);
    await this.forwarder?.stop();
    await this.receiver?.close(true);
    const left = this.forwarder ? this.o.journal.pending().length : 0;
    await this.o.journal.close();
    this.o.emit({ type: 'stopped', pending: left });
  }
}
