import { HEADER } from '../wire.js';
import { StringDecoder } from 'node:string_decoder';
import type { StreamResponse } from '../api/transport.js';
import { ExitCode } from '../errors.js';
import { deliveryHeaders } from './forward.js';

/**
 * The longest SSE event (and line) a relay may send: 1 MiB of context plus the largest delivery, a
 * 1 MiB body that JSON escaping may grow up to six times. Past it the connection is dropped.
 */
export const MAX_EVENT_CHARS = 8 * 1024 * 1024;

/** One Server-Sent Events message. */
export interface SseMessage {
  id?: string;
  event: string;
  data: string;
}

/** An incremental text/event-stream parser (WHATWG HTML, section 9.2.6): feed chunks, get messages. */
export class SseParser {
  /** The text of the line not yet ended. */
  private parts: string[] = [];
  private partChars = 0;
  private data: string[] = [];
  private event = '';
  private id: string | undefined;
  private dataChars = 0;

  constructor(
    private readonly onMessage: (message: SseMessage) => void,
    private readonly onRetry: (ms: number) => void = () => {},
    private readonly maxChars = MAX_EVENT_CHARS,
    /** Who sent the stream, as the size message names it. */
    private readonly sender = 'the relay',
  ) {}

  /**
   * Parses a chunk of text; complete messages are dispatched synchronously. Throws when a line or an
   * event grows past the limit (the stream must then be dropped: memory stays bounded).
   */
  push(chunk: string): void {
    // A chunk without a line end is only kept: no copy of a long line until it ends.
    if (!/[\r\n]/.test(chunk)) {
      this.parts.push(chunk);
      this.partChars += chunk.length;
      return this.checkLimit();
    }
    const eol = /\r\n|\r|\n/g;
    eol.lastIndex = Math.max(0, this.partChars - 1);
    const text = this.parts.join('') + chunk;
    let start = 0;
    for (let m = eol.exec(text); m; m = eol.exec(text)) {
      // A \r at the very end may be the first half of \r\n: wait for the next chunk.
      if (m[0] === '\r' && m.index === text.length - 1) break;
      this.line(text.slice(start, m.index));
      start = m.index + m[0].length;
    }
    const rest = text.slice(start);
    this.parts = rest ? [rest] : [];
    this.partChars = rest.length;
    this.checkLimit();
  }

  private checkLimit(): void {
    if (this.partChars + this.dataChars <= this.maxChars) return;
    this.parts = [];
    this.partChars = 0;
    this.data = [];
    this.dataChars = 0;
    throw new Error(`${this.sender} sent an event longer than ${this.maxChars / 1024 / 1024} MiB`);
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0)
        this.onMessage({ id: this.id, event: this.event || 'message', data: this.data.join('\n') });
      this.data = [];
      this.dataChars = 0;
      this.event = '';
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      this.data.push(value);
      this.dataChars += value.length;
    } else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.onRetry(Number(value));
  }
}

/** A delivery as the relay offers it. */
export interface RelayDelivery {
  seq: number | undefined;
  id: string;
  headers: Record<string, string>;
  body: string;
}

/** What a relay connection reports. */
export interface RelayHandlers {
  delivery(delivery: RelayDelivery): void;
  connected(after: number | undefined): void;
  /**
   * The server told us where its stream is (`event: position`, the newest sequence number), before
   * any delivery; `after` is the Last-Event-ID this connection was opened with.
   */
  position(info: { seq: number; after: number | undefined }): void;
  reconnecting(info: { attempt: number; delayMs: number; error: string }): void;
  /** The server refused us for good (401, 403, 404): no point in reconnecting. */
  fatal(info: { status: number; message: string; hints?: string[] }): void;
  /** A message that is not a delivery the relay protocol describes. */
  malformed(message: string): void;
}

/** Options of a relay connection. */
export interface RelayOptions {
  /** Opens the stream with these headers (the API client adds the credential and renews it). */
  open(headers: Record<string, string>, signal: AbortSignal): Promise<StreamResponse>;
  /** The sequence number to resume after (Last-Event-ID); undefined for live deliveries only. */
  resumeAfter(): number | undefined;
  /** No bytes (not even a keep-alive comment) for this long means a dead connection. */
  idleTimeoutMs?: number;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * The relay stream `GET /apps/{app}/webhooks/stream`: keeps one SSE connection open, reconnecting with
 * exponential backoff (a dead connection is noticed by its silence) and resuming with Last-Event-ID.
 */
export class RelayConnection {
  private connection: AbortController | undefined;
  private response: StreamResponse['body'] | undefined;
  private stopped = false;
  private paused = false;
  private attempt = 0;
  private retryMs: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private after: number | undefined;
  private armIdle: (() => void) | undefined;
  private dropCurrent: ((error: string) => void) | undefined;

  constructor(
    private readonly options: RelayOptions,
    private readonly on: RelayHandlers,
  ) {}

  /** Opens the first connection. */
  start(): void {
    this.connect();
  }

  /** Stops reading (backpressure); the server's writes then wait in the socket. */
  pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.response?.pause();
    if (this.response) clearTimeout(this.timer); // silence is ours now, not a dead server
  }

  /** Reads again after `pause`. */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.response?.resume();
    if (this.response) this.armIdle?.();
  }

  /** Drops the connection and reconnects (with backoff), resuming from `resumeAfter()`. */
  reconnect(error: string): void {
    this.dropCurrent?.(error);
  }

  /** Closes the connection for good. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.connection?.abort();
  }

  private connect(): void {
    const after = this.options.resumeAfter();
    this.after = after;
    const headers: Record<string, string> = {
      accept: 'text/event-stream',
      'cache-control': 'no-store',
    };
    if (after !== undefined) headers['last-event-id'] = String(after);
    const connection = new AbortController();
    this.connection = connection;
    let done = false;
    const fail = (error: string) => {
      if (done) return;
      done = true;
      clearTimeout(this.timer);
      connection.abort();
      this.response = undefined;
      this.scheduleReconnect(error);
    };
    const idleMs = this.options.idleTimeoutMs ?? 45_000;
    const armIdle = () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => fail(`no data for ${Math.round(idleMs / 1000)} s`), idleMs);
    };
    this.armIdle = armIdle;
    this.dropCurrent = fail;
    armIdle();
    this.options.open(headers, connection.signal).then(
      ({ status, body }) => {
        if (status !== 200) {
          let text = '';
          body.setEncoding('utf8');
          body.on('data', (d: string) => (text += d.slice(0, 2000)));
          body.on('error', (err: Error) => fail(err.message));
          body.on('end', () => {
            const message = describeRefusal(status, text);
            if ([401, 403, 404].includes(status)) {
              done = true;
              clearTimeout(this.timer);
              this.on.fatal({ status, message });
            } else fail(message);
          });
          return;
        }
        this.response = body;
        this.on.connected(after);
        if (this.paused) {
          body.pause();
          clearTimeout(this.timer);
        }
        const decoder = new StringDecoder('utf8');
        const parser = new SseParser(
          (m) => {
            // The backoff starts over once the server sent something of use, not on a mere connect.
            if (!done) this.attempt = 0;
            this.dispatch(m);
          },
          (ms) => (this.retryMs = ms),
        );
        body.on('data', (chunk: Buffer) => {
          if (done) return;
          if (!this.paused) armIdle();
          try {
            parser.push(decoder.write(chunk));
          } catch (err) {
            fail(`${(err as Error).message}; dropped the connection`);
          }
        });
        body.on('end', () => fail('the server closed the stream'));
        body.on('error', (err: Error) => fail(err.message));
      },
      (err: Error & { exitCode?: number; hints?: string[] }) => {
        // A credential that cannot be renewed (the API client says so with an auth error) ends it.
        if (err.exitCode !== ExitCode.auth) return fail(err.message);
        done = true;
        clearTimeout(this.timer);
        this.on.fatal({ status: 401, message: err.message, hints: err.hints });
      },
    );
  }

  private dispatch(m: SseMessage): void {
    if (m.event === 'position') return this.dispatchPosition(m);
    if (m.event !== 'delivery') return;
    try {
      const d = JSON.parse(m.data) as { delivery_id?: unknown; headers?: unknown; body?: unknown };
      if (typeof d.body !== 'string' || !d.headers || typeof d.headers !== 'object') throw new Error('shape');
      const headers = deliveryHeaders(d.headers as Record<string, unknown>);
      const id = typeof d.delivery_id === 'string' ? d.delivery_id : headers[HEADER.delivery];
      if (!id) throw new Error('no id');
      const seq = m.id !== undefined && /^\d+$/.test(m.id) ? Number(m.id) : undefined;
      if (seq !== undefined && !Number.isSafeInteger(seq)) {
        // Past 2^53 a number is rounded: resuming after it would skip or repeat deliveries.
        this.on.malformed(
          `A relay delivery (${id}) has the sequence number ${m.id}, beyond what can be counted exactly; it is taken without a position.`,
        );
        return this.on.delivery({ seq: undefined, id, headers, body: d.body });
      }
      this.on.delivery({ seq, id, headers, body: d.body });
    } catch {
      this.on.malformed(
        `A relay message (id ${m.id ?? '-'}) is not a delivery {delivery_id, headers, body}.`,
      );
    }
  }

  private dispatchPosition(m: SseMessage): void {
    let seq: unknown;
    try {
      seq = (JSON.parse(m.data) as { last_id?: unknown }).last_id;
    } catch {
      // not JSON: the id line alone says it
    }
    if (typeof seq === 'string' && /^\d{1,15}$/.test(seq)) seq = Number(seq);
    if (seq === undefined && m.id !== undefined && /^\d{1,15}$/.test(m.id)) seq = Number(m.id);
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) {
      this.on.malformed(`A relay position message (id ${m.id ?? '-'}) has no sequence number {last_id}.`);
      return;
    }
    this.on.position({ seq, after: this.after });
  }

  private scheduleReconnect(error: string): void {
    if (this.stopped) return;
    this.attempt += 1;
    const initial = this.retryMs ?? this.options.initialBackoffMs ?? 500;
    const base = Math.min(initial * 2 ** (this.attempt - 1), this.options.maxBackoffMs ?? 30_000);
    const delayMs = Math.round(base / 2 + (Math.random() * base) / 2); // jitter: many listeners, one server
    this.on.reconnecting({ attempt: this.attempt, delayMs, error });
    this.timer = setTimeout(() => this.connect(), delayMs);
  }
}

function describeRefusal(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: string } | string };
    const e = body.error;
    if (typeof e === 'object' && e?.message) return `HTTP ${status}: ${e.message}`;
    if (typeof e === 'string') return `HTTP ${status}: ${e}`;
  } catch {
    // not JSON: use an excerpt
  }
  const plain = text
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200);
  return `HTTP ${status}${plain ? `: ${plain}` : ''}`;
}
