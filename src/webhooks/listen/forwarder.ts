import { redactUrl } from '../../api/redact.js';
import { isoTime, type Clock } from '../../platform/clock.js';
import { forwardTo, restamp, type Forward, type ForwardResult } from '../forward.js';
import type { DeliveryLog, ReceivedRecord, StatusRecord } from '../journal.js';
import { deliveryReport, type ListenEvent } from './events.js';
import { backoffMs, isRetryable, triesExhausted, type RetryPolicy } from './retry-policy.js';

/** Settings of the forwarder. */
export interface ForwarderOptions {
  target: URL;
  journal: DeliveryLog;
  clock: Clock;
  policy: RetryPolicy;
  concurrency: number;
  timeoutMs?: number;
  /** The signing secret in use: a delivery forwarded late is restamped and signed with it (restamp). */
  secret?(): string | undefined;
  /** The command that re-drives a failed delivery, as printed. */
  resendHint(id: string): string;
  emit(event: ListenEvent): void;
  /** Told when the backlog went down (intake may read again). */
  drained(): void;
}

/** A journaled delivery to forward: its record, its exact bytes, when it arrived. */
export interface Job {
  record: ReceivedRecord;
  body: Buffer;
  started: number;
}

/**
 * Forwards journaled deliveries, `concurrency` at a time, in arrival order. A slot is held until the
 * outcome is on disk (the group commit that follows), so a crash repeats at most `concurrency` forwards. While the target is down only
 * one delivery (the probe) retries, with capped backoff; the others wait for it and go once it answers.
 */
export class Forwarder {
  private readonly queue: Job[] = [];
  private active = 0;
  /** A pump is due on the next tick. */
  private pumping = false;
  private down: { since: number; failures: number; probe: Job | undefined } | undefined;
  private readonly up = new Set<() => void>();
  private readonly idle = new Set<() => void>();
  private readonly stopping = new AbortController();
  private readonly forward: Forward;
  /** The target as journaled: a password in it shown as `***` (kept in the credential store). */
  private readonly targetLabel: string;

  constructor(private readonly o: ForwarderOptions) {
    this.forward = forwardTo(o.target, { timeoutMs: o.timeoutMs });
    this.targetLabel = redactUrl(o.target.href);
  }

  /** Deliveries queued or being forwarded. */
  get backlog(): number {
    return this.queue.length + this.active;
  }

  /**
   * Queues a journaled delivery. Forwards start on the next tick: the deliveries of one group commit
   * are all answered first (their senders wait on that answer to send more), then forwarded in order.
   */
  push(job: Job): void {
    this.queue.push(job);
    if (this.pumping) return;
    this.pumping = true;
    process.nextTick(() => {
      this.pumping = false;
      this.pump();
    });
  }

  private pump(): void {
    while (!this.stopping.signal.aborted && this.active < this.o.concurrency && this.queue.length > 0) {
      this.active += 1;
      void this.run(this.queue.shift()!);
    }
  }

  /** A slot is free again: its delivery's outcome is on disk, or listen is stopping. */
  private release(): void {
    this.active -= 1;
    this.o.drained();
    if (this.active === 0) {
      for (const r of this.idle) r();
      this.idle.clear();
    }
    this.pump();
  }

  /** Forwards `job` until it is settled; its slot is released once the outcome is on disk. */
  private async run(job: Job): Promise<void> {
    const { policy, clock } = this.o;
    let attempts = 0;
    for (;;) {
      if (this.stopping.signal.aborted) return this.release(); // stays "received": forwarded on the next start
      if (this.down && this.down.probe !== job) {
        if (this.down.probe) {
          await new Promise<void>((r) => this.up.add(r));
          continue;
        }
        this.down.probe = job;
      }
      attempts += 1;
      const sent = restamp(this.o.secret?.(), job.body, job.record.headers, clock.now());
      const result = await this.forward(sent.body, sent.headers);
      if (result.unsendable) {
        // The delivery's own fault, whatever the target: failed once, the next one goes.
        if (this.down?.probe === job) this.handOver();
        return this.settle(job, attempts - 1, result);
      }
      if (result.ok || !isRetryable(result)) {
        this.markUp();
        return this.settle(job, attempts, result);
      }
      if (triesExhausted(policy, attempts)) {
        if (this.down?.probe === job) this.handOver();
        return this.settle(job, attempts, result);
      }
      this.down ??= { since: clock.now(), failures: 0, probe: job };
      if (this.down.probe !== job) continue;
      this.down.failures += 1;
      const delay = backoffMs(policy, this.down.failures);
      this.o.emit({
        type: 'target_down',
        id: job.record.id,
        attempt: attempts,
        delay_ms: delay,
        error: result.error ?? `HTTP ${result.status}`,
        waiting: this.backlog,
      });
      try {
        await clock.sleep(delay, this.stopping.signal);
      } catch {
        return this.release();
      }
    }
  }

  private markUp(): void {
    if (!this.down) return;
    this.o.emit({ type: 'target_up', after_ms: this.o.clock.now() - this.down.since });
    this.down = undefined;
    this.wake();
  }

  /** The probe is leaving (it failed for good): the next waiting delivery probes. */
  private handOver(): void {
    if (this.down) this.down.probe = undefined;
    this.wake();
  }

  private wake(): void {
    const waiting = [...this.up];
    this.up.clear();
    for (const r of waiting) r();
  }

  /** Journals the outcome, then reports it and releases the slot. */
  private settle(job: Job, attempts: number, result: ForwardResult): void {
    const { record } = job;
    const at = isoTime(this.o.clock.now());
    const error = result.ok ? undefined : (result.error ?? `HTTP ${result.status}`);
    const target = this.targetLabel;
    const status: StatusRecord = {
      t: 'status',
      id: record.id,
      at,
      status: result.ok ? 'forwarded' : 'failed',
      attempts,
      response_status: result.status ?? undefined,
      latency_ms: result.ms,
      response_excerpt: result.excerpt ?? undefined,
      error,
      // Named when it is not the target the delivery was journaled for.
      forward_to: record.forward_to === target ? undefined : target,
    };
    const report = () => {
      const r = deliveryReport(record, at, result.ok ? 'forwarded' : 'failed');
      r.attempts = attempts;
      r.response_status = result.status;
      r.response_ms = result.ms;
      r.response_excerpt = result.excerpt;
      if (result.ok) {
        r.latency_ms = Math.max(0, this.o.clock.now() - job.started);
        this.o.emit({ type: 'forwarded', report: r });
      } else {
        r.reason = error ?? null;
        this.o.emit({ type: 'forward_failed', report: r, resend: this.o.resendHint(record.id) });
      }
      this.release();
    };
    void this.o.journal
      .append(status)
      .then(report, (err: Error) => this.keepWriting(status, err).then(report));
  }

  /** An outcome not on disk would make the next start forward the delivery again: keeps trying. */
  private async keepWriting(status: StatusRecord, err: Error): Promise<void> {
    this.o.emit({
      type: 'warning',
      message: `Journal: ${err.message}; the outcome of ${status.id} is written once it can be.`,
    });
    for (let n = 1; ; n++) {
      try {
        await this.o.clock.sleep(backoffMs(this.o.policy, n), this.stopping.signal);
      } catch {
        return;
      }
      try {
        return await this.o.journal.append(status);
      } catch {
        // still full, or still failing
      }
    }
  }

  /** Stops starting forwards and cuts waits short; resolves when the forwards in flight are settled. */
  async stop(): Promise<void> {
    this.stopping.abort(new Error('stopping'));
    this.wake();
    while (this.active > 0) await new Promise<void>((r) => this.idle.add(r));
    await this.forward.close();
  }
}
