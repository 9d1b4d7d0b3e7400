import { createHmac } from 'node:crypto';
import { appendFile, mkdir } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { randomId, isoTime } from './ids.js';
import { writeFileAtomic } from '../fs-atomic.js';
import type { AppRecord } from './store.js';

/** Deliveries kept per app for relay resume; older ones stay only in the log file until compaction. */
export const RING_CAPACITY = 10_000;
/** The User-Agent of webhook deliveries. */
export const USER_AGENT = 'mkt-sandbox/0.1.0';
const KEEP_ALIVE_MS = 15_000;

/** One signed delivery: the exact bytes and headers sent to the webhook URL and to relay listeners. */
export interface DeliveryRecord {
  seq: number;
  id: string;
  app_id: string;
  event: string;
  created_at: string;
  body: string;
  signature: string;
}

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

/** Where deliveries are logged, the clock, and the retry schedule. */
export interface DeliveryOptions {
  dataDir: string;
  now: () => number;
  backoffMs: number[];
  timeoutMs: number;
  log: (line: string) => void;
}

/** `sha256=` + lowercase hex HMAC-SHA256 of the raw body, keyed by the UTF-8 bytes of the secret. */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body, 'utf8').digest('hex')}`;
}

/** The headers every delivery carries (lowercase, as relayed on the stream). */
export function deliveryHeaders(d: DeliveryRecord): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-marketplace-signature': d.signature,
    'x-marketplace-delivery': d.id,
    'x-marketplace-event': d.event,
  };
}

/** A fixed-size ring of the newest deliveries of one app, addressed by sequence number. */
class AppHistory {
  private readonly items: DeliveryRecord[] = [];
  private head = 0;
  lastSeq = 0;
  readonly listeners = new Set<ServerResponse>();
  pendingLines: string[] = [];
  writing: Promise<void> = Promise.resolve();

  push(d: DeliveryRecord): void {
    if (this.items.length < RING_CAPACITY) this.items.push(d);
    else {
      this.items[this.head] = d;
      this.head = (this.head + 1) % RING_CAPACITY;
    }
    this.lastSeq = d.seq;
  }

  /** Every kept delivery with a sequence number above `after`, oldest first. */
  since(after: number): DeliveryRecord[] {
    const count = this.items.length;
    const oldest = this.lastSeq - count + 1;
    const from = Math.max(after + 1, oldest);
    const out: DeliveryRecord[] = [];
    for (let seq = from; seq <= this.lastSeq; seq++) {
      out.push(this.items[(this.head + (seq - oldest)) % RING_CAPACITY]!);
    }
    return out;
  }

  get size(): number {
    return this.items.length;
  }
}

/**
 * Creates, signs, logs and sends webhook deliveries, retries failures with backoff, and offers every
 * delivery to relay listeners (Server-Sent Events). The log is append-only JSONL, one file per app.
 */
export class Deliveries {
  private readonly histories = new Map<string, AppHistory>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<AbortController>();
  private closed = false;

  constructor(private readonly options: DeliveryOptions) {}

  private get dir(): string {
    return join(this.options.dataDir, 'deliveries');
  }

  private logPath(appId: string): string {
    return join(this.dir, `${appId}.jsonl`);
  }

  /** The history of one app, read from its log on first use (and compacted if it grew large). */
  private history(appId: string): AppHistory {
    let h = this.histories.get(appId);
    if (h !== undefined) return h;
    h = new AppHistory();
    this.histories.set(appId, h);
    const path = this.logPath(appId);
    if (existsSync(path)) {
      const lines = readFileSync(path, 'utf8').split('\n');
      let kept = 0;
      for (const line of lines) {
        if (line === '') continue;
        try {
          const d = JSON.parse(line) as DeliveryRecord;
          if (typeof d.seq === 'number' && d.seq > h.lastSeq) {
            h.push(d);
            kept++;
          }
        } catch {
          // A line cut short by a crash mid-append: skip it, the rest of the log is intact.
        }
      }
      if (kept > 2 * RING_CAPACITY) {
        const text = h
          .since(0)
          .map((d) => JSON.stringify(d) + '\n')
          .join('');
        h.writing = writeFileAtomic(path, text).catch((e: unknown) =>
          this.options.log(`log compaction failed: ${String(e)}`),
        );
      }
    }
    return h;
  }

  /** Creates a delivery for `event`, offers it to listeners and makes the first webhook attempt. */
  async emit(app: AppRecord, event: string, data: unknown): Promise<EmitResult> {
    const h = this.history(app.id);
    const envelope = { event, timestamp: isoTime(this.options.now()), data };
    const body = JSON.stringify(envelope);
    const delivery: DeliveryRecord = {
      seq: h.lastSeq + 1,
      id: randomId('dlv', 12),
      app_id: app.id,
      event,
      created_at: envelope.timestamp,
      body,
      signature: signBody(app.webhook_secret, body),
    };
    h.push(delivery);
    this.append(h, app.id, delivery);
    const frame = sseFrame(delivery);
    for (const res of h.listeners) res.write(frame);
    const listeners = h.listeners.size;
    if (app.webhook_url === null) {
      this.options.log(`delivery ${delivery.id} ${event} (no webhook url) listeners=${listeners}`);
      return {
        delivery,
        envelope,
        listeners,
        webhook: { url: null, status: 'no_url', response_status: null, error: null },
      };
    }
    const webhook = await this.attempt(app.webhook_url, delivery, 1);
    return { delivery, envelope, listeners, webhook };
  }

  /** Emits without waiting for the first attempt (events the sandbox causes itself). */
  emitInBackground(app: AppRecord, event: string, data: unknown): void {
    void this.emit(app, event, data).catch((e: unknown) => this.options.log(`delivery failed: ${String(e)}`));
  }

  private append(h: AppHistory, appId: string, d: DeliveryRecord): void {
    h.pendingLines.push(JSON.stringify(d) + '\n');
    if (h.pendingLines.length > 1) return;
    h.writing = h.writing.then(async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      const text = h.pendingLines.join('');
      h.pendingLines = [];
      try {
        await mkdir(this.dir, { recursive: true });
        await appendFile(this.logPath(appId), text, 'utf8');
      } catch (e) {
        this.options.log(`delivery log write failed: ${String(e)}`);
      }
    });
  }

  private async attempt(url: string, d: DeliveryRecord, attemptNo: number): Promise<FirstAttempt> {
    const controller = new AbortController();
    this.inFlight.add(controller);
    const timer = setTimeout(() => controller.abort(), this.options.timeoutMs);
    let result: FirstAttempt;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: deliveryHeaders(d),
        body: d.body,
        redirect: 'manual',
        signal: controller.signal,
      });
      await res.arrayBuffer().catch(() => undefined);
      const ok = res.status >= 200 && res.status < 300;
      result = {
        url,
        status: ok ? 'delivered' : 'failed',
        response_status: res.status,
        error: ok ? null : `HTTP ${res.status}`,
      };
    } catch (e) {
      const message = controller.signal.aborted
        ? `no answer within ${this.options.timeoutMs} ms`
        : describe(e);
      result = { url, status: 'failed', response_status: null, error: message };
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(controller);
    }
    this.options.log(
      `delivery ${d.id} ${d.event} attempt ${attemptNo} -> ${url} ${result.response_status ?? result.error}`,
    );
    if (result.status === 'failed') this.scheduleRetry(url, d, attemptNo);
    return result;
  }

  private scheduleRetry(url: string, d: DeliveryRecord, attemptNo: number): void {
    const wait = this.options.backoffMs[attemptNo - 1];
    if (wait === undefined || this.closed) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.closed) void this.attempt(url, d, attemptNo + 1);
    }, wait);
    this.timers.add(timer);
  }

  /**
   * Attaches an SSE response. With `lastEventId` (the client's Last-Event-ID): every kept delivery
   * after it, then live ones. Without (or with one beyond the newest, after a reset): no history;
   * first a `position` event naming the newest sequence number (0 when none), the client's resume
   * point, then live deliveries.
   */
  subscribe(appId: string, res: ServerResponse, lastEventId: number | undefined): void {
    const h = this.history(appId);
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write(': connected\n\n');
    // A Last-Event-ID beyond the newest delivery means the sandbox was reset: say where it is now.
    if (lastEventId === undefined || lastEventId > h.lastSeq) res.write(positionFrame(h.lastSeq));
    else for (const d of h.since(lastEventId)) res.write(sseFrame(d));
    h.listeners.add(res);
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    const detach = (): void => {
      clearInterval(keepAlive);
      h.listeners.delete(res);
    };
    res.on('close', detach);
  }

  /** Number of deliveries kept in memory for `appId` (for tests and diagnostics). */
  keptCount(appId: string): number {
    return this.history(appId).size;
  }

  /** Ends relay streams, stops retries and in-flight attempts, and finishes log writes. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const controller of this.inFlight) controller.abort();
    const writes: Promise<void>[] = [];
    for (const h of this.histories.values()) {
      for (const res of h.listeners) res.end();
      h.listeners.clear();
      writes.push(h.writing);
    }
    await Promise.all(writes);
  }
}

function sseFrame(d: DeliveryRecord): string {
  const data = JSON.stringify({ delivery_id: d.id, headers: deliveryHeaders(d), body: d.body });
  return `id: ${d.seq}\nevent: delivery\ndata: ${data}\n\n`;
}

function positionFrame(seq: number): string {
  return `id: ${seq}\nevent: position\ndata: ${JSON.stringify({ last_id: seq })}\n\n`;
}

function describe(e: unknown): string {
  if (e instanceof Error) {
    const cause = (e as Error & { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ?? cause?.message ?? e.message;
  }
  return String(e);
}
