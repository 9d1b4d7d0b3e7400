import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../clock.js';
import { deliveryHeaders, forwardDelivery } from './forward.js';
import type { DeliveryLog, DeliverySource, ReceivedRecord, StatusRecord } from './journal.js';
import { RelayConnection } from './relay.js';
import { checkDelivery, type RefusalReason } from './signature.js';

/** One delivery's outcome, as `listen` prints it (one line, or one JSON object with --json). */
export interface DeliveryReport {
  time: string;
  id: string;
  event: string | null;
  source: DeliverySource;
  seq: number | null;
  signature: 'valid' | 'invalid' | 'missing' | 'malformed';
  status: 'forwarded' | 'failed' | 'refused' | 'received' | 'duplicate' | 'filtered' | 'pending';
  response_status: number | null;
  attempts: number;
  reason: string | null;
  latency_ms: number | null;
}

/** What the engine reports; the command renders these (the engine never prints). */
export type ListenEvent =
  | {
      type: 'ready';
      receiver: string | null;
      relay: string | null;
      forward_to: string | null;
      /** The relay position this run resumed after (from the journal); null on a first run. */
      resume_after: number | null;
      /** The relay position now: deliveries after it are forwarded; null when the relay gave none. */
      position: number | null;
      pending: number;
    }
  | { type: 'connected'; after: number | null }
  | { type: 'reconnecting'; attempt: number; delay_ms: number; error: string }
  | { type: 'received'; id: string; source: DeliverySource; seq: number | null }
  | { type: 'verified'; report: DeliveryReport }
  | { type: 'refused'; report: DeliveryReport }
  | { type: 'duplicate'; report: DeliveryReport }
  | { type: 'filtered'; report: DeliveryReport }
  | { type: 'forward_retry'; id: string; attempt: number; delay_ms: number; error: string }
  | { type: 'forwarded'; report: DeliveryReport }
  | { type: 'forward_failed'; report: DeliveryReport }
  | { type: 'warning'; message: string }
  | { type: 'fatal'; message: string; status: number };

/** Settings of the listen engine. */
export interface ListenOptions {
  journal: DeliveryLog;
  clock: Clock;
  secret: string;
  /** Replay window in seconds for the local receiver. */
  toleranceSeconds: number;
  /** Relay stream URL and auth headers; undefined with --no-relay. */
  relay?: { url: URL; headers: Record<string, string>; env?: Record<string, string | undefined> };
  /** Local receiver port (0: any); undefined for no local receiver. */
  port?: number;
  host?: string;
  forwardTo?: URL;
  /** Event kinds to keep; empty or undefined: all. */
  events?: Set<string>;
  /** Tries per forward (first included). */
  forwardTries?: number;
  /** Wait before the first retry; doubles each time. */
  forwardBackoffMs?: number;
  forwardTimeoutMs?: number;
  /** Forwards in flight at once. */
  concurrency?: number;
  /** Deliveries waiting to be forwarded before intake pauses (relay) or waits (local receiver). */
  highWaterMark?: number;
  relayIdleTimeoutMs?: number;
  relayBackoffMs?: number;
  /**
   * On a first connection without a known position, how long `start` waits for the relay's position
   * event before it reports ready anyway (a server that sends none).
   */
  relayPositionWaitMs?: number;
  emit(event: ListenEvent): void;
}

interface Job {
  record: ReceivedRecord;
  report: DeliveryReport;
  started: number;
}

const MAX_BODY_BYTES = 1024 * 1024;

/** The request body as text; rejects with "too_large" past MAX_BODY_BYTES (the rest is drained). */
function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      const over = size > MAX_BODY_BYTES;
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
      else if (!over) {
        chunks.length = 0; // the rest is read and dropped
        reject(new Error('too_large'));
      }
    });
    req.once('end', () => {
      if (size <= MAX_BODY_BYTES)
        resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    });
    req.once('error', reject);
    req.once('aborted', () => reject(new Error('aborted')));
  });
}

/**
 * `mkt webhooks listen`: takes deliveries from the relay stream and a local receiver, verifies them,
 * journals them (fsync) before forwarding, forwards with retries, and reports typed events.
 */
export class WebhookListener {
  private server: http.Server | undefined;
  private relay: RelayConnection | undefined;
  private readonly queue: Job[] = [];
  private active = 0;
  private stopping = false;
  private readonly idle = new Set<() => void>();
  private readonly room = new Set<() => void>();
  private readonly stopSignal = new AbortController();
  private readonly inflight = new Set<string>();
  /**
   * Only for a server that sends no position event and replays its whole history to a client without
   * Last-Event-ID: on a first run (no position in the journal), relay deliveries older than this are
   * history, recorded, not forwarded. Cleared as soon as the relay tells us its position.
   */
  private historyBefore: number | undefined;
  /** Journal writes of forward outcomes not yet on disk (stop waits for them). */
  private readonly outcomes = new Set<Promise<void>>();

  constructor(private readonly o: ListenOptions) {}

  /** Starts the receiver and the relay; resolves once both are ready (the relay connected once). */
  async start(): Promise<{ receiver: string | null }> {
    let receiver: string | null = null;
    if (this.o.port !== undefined) {
      const server = http.createServer((req, res) => void this.receive(req, res));
      this.server = server;
      server.keepAliveTimeout = 5_000;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(this.o.port, this.o.host ?? '127.0.0.1', () => resolve());
      });
      const a = server.address() as AddressInfo;
      receiver = `http://${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}/`;
    }
    const pending = this.o.forwardTo ? this.o.journal.pending() : [];
    for (const record of pending) this.enqueue(record, this.reportFor(record, 'valid'), this.o.clock.now());
    const resumeAfter = this.o.journal.lastSeq;
    // Without a position the relay stream is opened without Last-Event-ID: the server answers with its
    // position and live deliveries only. A server that replays its whole history instead (no position
    // event) gets the old first-run rule: only what happens from now on is forwarded (like `stripe
    // listen`); the rest is journaled for resend.
    if (resumeAfter === undefined) this.historyBefore = this.o.clock.now() - 2_000;
    if (this.o.relay) await this.startRelay(this.o.relay);
    this.o.emit({
      type: 'ready',
      receiver,
      relay: this.o.relay?.url.href ?? null,
      forward_to: this.o.forwardTo?.href ?? null,
      resume_after: resumeAfter ?? null,
      position: this.o.relay ? (this.o.journal.lastSeq ?? null) : null,
      pending: pending.length,
    });
    return { receiver };
  }

  private startRelay(relay: NonNullable<ListenOptions['relay']>): Promise<void> {
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
          url: relay.url,
          headers: relay.headers,
          env: relay.env,
          // No position yet: no Last-Event-ID, and the server tells us its position.
          resumeAfter: () => this.o.journal.lastSeq,
          idleTimeoutMs: this.o.relayIdleTimeoutMs,
          initialBackoffMs: this.o.relayBackoffMs,
        },
        {
          delivery: (d) => {
            this.o.emit({ type: 'received', id: d.id, source: 'relay', seq: d.seq ?? null });
            this.intake({ source: 'relay', seq: d.seq, id: d.id, headers: d.headers, body: d.body }).then(
              ready,
              (err: Error) => this.o.emit({ type: 'warning', message: `Delivery ${d.id}: ${err.message}` }),
            );
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
            this.o.emit({ type: 'fatal', message: f.message, status: f.status });
            if (first) reject(Object.assign(new Error(f.message), { status: f.status }));
            first = false;
          },
          malformed: (message) => this.o.emit({ type: 'warning', message }),
        },
      );
      this.relay.start();
    });
  }

  private async receive(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return answer(405, { error: { code: 'method_not_allowed', message: 'Deliveries are POSTed.' } });
    }
    if (this.stopping) return answer(503, { error: { code: 'shutting_down', message: 'mkt is stopping.' } });
    let body: string;
    try {
      body = await readBody(req);
    } catch (err) {
      if ((err as Error).message !== 'too_large') return;
      return answer(413, { error: { code: 'payload_too_large', message: 'Deliveries are at most 1 MiB.' } });
    }
    const headers = deliveryHeaders(req.headers);
    const id = headers['x-marketplace-delivery'] || `local_${randomBytes(8).toString('hex')}`;
    this.o.emit({ type: 'received', id, source: 'local', seq: null });
    let verdict: Awaited<ReturnType<WebhookListener['intake']>>;
    try {
      verdict = await this.intake({
        source: 'local',
        id,
        headers,
        body,
      });
    } catch (err) {
      return answer(503, { error: { code: 'journal_failed', message: (err as Error).message } });
    }
    if (verdict.status === 'refused') {
      const status = verdict.reason === 'bad_signature' || verdict.reason?.endsWith('signature') ? 401 : 400;
      return answer(status, { error: { code: verdict.reason, message: verdict.message }, id });
    }
    answer(verdict.status === 'duplicate' ? 200 : 202, { id, status: verdict.status });
  }

  private reportFor(record: ReceivedRecord, signature: DeliveryReport['signature']): DeliveryReport {
    return {
      time: new Date(this.o.clock.now()).toISOString(),
      id: record.id,
      event: record.event ?? record.headers['x-marketplace-event'] ?? null,
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

  /** Verifies, journals and queues one delivery; answers what became of it. */
  private async intake(input: {
    source: DeliverySource;
    seq?: number;
    id: string;
    headers: Record<string, string>;
    body: string;
  }): Promise<{ status: DeliveryReport['status']; reason?: RefusalReason; message?: string }> {
    const started = this.o.clock.now();
    const { journal } = this.o;
    const at = new Date(started).toISOString();
    const record: ReceivedRecord = {
      t: 'received',
      id: input.id,
      at,
      source: input.source,
      ...(input.seq !== undefined ? { seq: input.seq } : {}),
      headers: input.headers,
      body: input.body,
    };
    if (journal.statusOf(input.id) !== undefined || this.inflight.has(input.id)) {
      if (input.seq !== undefined && input.seq > (journal.lastSeq ?? -1)) journal.lastSeq = input.seq;
      const report = { ...this.reportFor(record, 'valid' as const), status: 'duplicate' as const };
      this.o.emit({ type: 'duplicate', report });
      return { status: 'duplicate' };
    }
    this.inflight.add(input.id);
    try {
      const check = checkDelivery({
        secret: this.o.secret,
        body: input.body,
        signature: input.headers['x-marketplace-signature'],
        now: started,
        // The relay replays missed deliveries on purpose over an authenticated channel; the replay
        // window protects the local receiver, which anyone on this machine can reach.
        toleranceSeconds: input.source === 'local' ? this.o.toleranceSeconds : undefined,
      });
      const envelope = check.ok ? check.envelope : check.envelope;
      if (envelope) record.event = envelope.event;
      const signature: DeliveryReport['signature'] = check.ok
        ? 'valid'
        : check.reason === 'missing_signature'
          ? 'missing'
          : check.reason === 'malformed_signature'
            ? 'malformed'
            : check.reason === 'bad_signature'
              ? 'invalid'
              : 'valid';
      const report = this.reportFor(record, signature);
      if (!check.ok) {
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
      const events = this.o.events;
      const history =
        input.source === 'relay' &&
        this.historyBefore !== undefined &&
        Date.parse(check.envelope.timestamp) < this.historyBefore;
      if (history || (events && events.size > 0 && !events.has(check.envelope.event))) {
        const reason = history ? 'history' : 'event_filter';
        await journal.append(record, { t: 'status', id: record.id, at, status: 'filtered', reason });
        this.o.emit({ type: 'filtered', report: { ...report, status: 'filtered', reason } });
        return { status: 'filtered' };
      }
      if (this.o.forwardTo) {
        record.forward_to = this.o.forwardTo.href;
        if (this.backlog >= (this.o.highWaterMark ?? 256)) await this.waitForRoom();
      }
      await journal.append(record);
      this.o.emit({ type: 'verified', report });
      if (this.o.forwardTo) this.enqueue(record, report, started);
      return { status: this.o.forwardTo ? 'pending' : 'received' };
    } finally {
      this.inflight.delete(input.id);
    }
  }

  private get backlog(): number {
    return this.queue.length + this.active;
  }

  private async waitForRoom(): Promise<void> {
    const high = this.o.highWaterMark ?? 256;
    if (this.backlog >= high) this.relay?.pause();
    while (this.backlog >= high && !this.stopping) await new Promise<void>((r) => this.room.add(r));
  }

  private enqueue(record: ReceivedRecord, report: DeliveryReport, started: number): void {
    this.queue.push({ record, report, started });
    this.pump();
  }

  private pump(): void {
    while (!this.stopping && this.active < (this.o.concurrency ?? 8) && this.queue.length > 0) {
      const job = this.queue.shift()!;
      this.active += 1;
      void this.forward(job).finally(() => {
        this.active -= 1;
        if (this.backlog < (this.o.highWaterMark ?? 256) / 2) {
          this.relay?.resume();
          for (const r of this.room) r();
          this.room.clear();
        }
        if (this.active === 0) for (const r of this.idle) r();
        this.pump();
      });
    }
  }

  private async forward(job: Job): Promise<void> {
    const { record, report } = job;
    const target = this.o.forwardTo!;
    const tries = this.o.forwardTries ?? 5;
    let attempts = 0;
    for (;;) {
      attempts += 1;
      const result = await forwardDelivery(target, record.body, record.headers, {
        timeoutMs: this.o.forwardTimeoutMs,
      });
      const at = new Date(this.o.clock.now()).toISOString();
      const done = { ...report, attempts, response_status: result.status, time: at };
      if (result.ok) {
        const latency = Math.max(0, this.o.clock.now() - job.started);
        this.outcome(
          {
            t: 'status',
            id: record.id,
            at,
            status: 'forwarded',
            attempts,
            response_status: result.status ?? undefined,
            forward_to: target.href,
          },
          { type: 'forwarded', report: { ...done, status: 'forwarded', latency_ms: latency } },
        );
        return;
      }
      const error = result.error ?? `HTTP ${result.status}`;
      if (attempts >= tries) {
        this.outcome(
          {
            t: 'status',
            id: record.id,
            at,
            status: 'failed',
            attempts,
            ...(result.status !== null ? { response_status: result.status } : {}),
            error,
            forward_to: target.href,
          },
          { type: 'forward_failed', report: { ...done, status: 'failed', reason: error } },
        );
        return;
      }
      const delay = (this.o.forwardBackoffMs ?? 1_000) * 2 ** (attempts - 1);
      this.o.emit({ type: 'forward_retry', id: record.id, attempt: attempts, delay_ms: delay, error });
      try {
        await this.o.clock.sleep(delay, this.stopSignal.signal);
      } catch {
        // Stopping: the delivery stays "received" in the journal and is forwarded on the next start.
        this.o.emit({ type: 'forward_failed', report: { ...done, status: 'pending', reason: error } });
        return;
      }
    }
  }

  /**
   * Journals the outcome of a forward and reports it once it is on disk. The forward slot is free at
   * once: outcomes share group commits with the deliveries that arrive meanwhile. (Should the process
   * die first, the delivery is still "received" in the journal and is forwarded again on the next start.)
   */
  private outcome(status: StatusRecord, event: ListenEvent): void {
    const written: Promise<void> = this.o.journal.append(status).then(
      () => {
        this.outcomes.delete(written);
        this.o.emit(event);
      },
      (err: Error) => {
        this.outcomes.delete(written);
        this.o.emit({ type: 'warning', message: `Journal: ${err.message}` });
        this.o.emit(event);
      },
    );
    this.outcomes.add(written);
  }

  /** Stops taking deliveries, lets forwards in flight finish (waits for retries are cut short), flushes the journal. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.relay?.stop();
    this.stopSignal.abort(new Error('stopping'));
    for (const r of this.room) r();
    const closed = this.server ? new Promise<void>((r) => this.server!.close(() => r())) : Promise.resolve();
    this.server?.closeIdleConnections();
    while (this.active > 0) await new Promise<void>((r) => this.idle.add(r));
    await Promise.all(this.outcomes);
    this.server?.closeAllConnections();
    await closed;
    await this.o.journal.close();
  }
}
