import { StringDecoder } from 'node:string_decoder';
import { resolveAppId } from '../apps/resolve.js';
import type { Deps } from '../deps.js';
import { MAX_EVENT_CHARS, SseParser } from '../webhooks/relay.js';
import { logFilter, type RequestLogEntry } from './filter.js';

/** What `tailLogs` reports; the command renders it. */
export type TailEvent =
  | { type: 'ready'; app_id: string }
  | { type: 'request'; entry: RequestLogEntry }
  | { type: 'reconnecting'; attempt: number; delay_ms: number; error: string }
  | { type: 'malformed'; message: string };

/** How `tailLogs` waits: silence that means a dead connection, and the reconnect backoff. */
export interface TailTiming {
  idleTimeoutMs: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
}

const DEFAULT_TIMING: TailTiming = { idleTimeoutMs: 45_000, initialBackoffMs: 250, maxBackoffMs: 10_000 };

/**
 * Streams the app's request log (`GET /apps/{app}/logs/stream`, Server-Sent Events) until `signal`
 * is aborted: every entry that passes the filter is emitted as it arrives. A dropped or silent
 * connection is opened again with backoff and `Last-Event-ID`, so entries made meanwhile are not
 * missed while the server still keeps them. A refusal (401, 403, 404) ends it with the API's error.
 */
export async function tailLogs(
  deps: Pick<Deps, 'api' | 'clock' | 'config' | 'profile' | 'session'>,
  input: {
    app?: string;
    status?: string;
    path?: string;
    signal: AbortSignal;
    emit: (event: TailEvent) => void;
    /** While the output cannot keep up, a promise of when it can: the stream is not read meanwhile. */
    backlog?: () => Promise<void> | undefined;
    timing?: Partial<TailTiming>;
  },
): Promise<void> {
  const filter = logFilter(input);
  const timing = { ...DEFAULT_TIMING, ...input.timing };
  const app = await resolveAppId(deps, input);
  const path = `/apps/${encodeURIComponent(app)}/logs/stream`;
  let lastId: string | undefined;
  let announced = false;
  let attempt = 0;
  /** One connection: answers why it ended, or throws a refusal that reconnecting cannot fix. */
  const connect = async (): Promise<string> => {
    let res: Awaited<ReturnType<typeof deps.api.stream>>;
    try {
      res = await deps.api.stream(path, {
        headers: {
          accept: 'text/event-stream',
          'cache-control': 'no-store',
          ...(lastId ? { 'last-event-id': lastId } : {}),
        },
        signal: input.signal,
      });
    } catch (err) {
      return (err as Error).message;
    }
    if (res.status !== 200) {
      const text = await readBounded(res.body);
      if (![400, 401, 403, 404].includes(res.status)) return `HTTP ${res.status}`;
      throw deps.api.errorFor(
        { status: res.status, headers: {}, text },
        parseJson(text),
        null,
        deps.api.url(path),
      );
    }
    if (!announced) input.emit({ type: 'ready', app_id: app });
    announced = true;
    return readEntries(res.body, {
      idleTimeoutMs: timing.idleTimeoutMs,
      signal: input.signal,
      backlog: input.backlog,
      entry: (entry) => {
        attempt = 0;
        lastId = entry.id;
        if (filter(entry)) input.emit({ type: 'request', entry });
      },
      malformed: (message) => input.emit({ type: 'malformed', message }),
    });
  };
  while (!input.signal.aborted) {
    const error = await connect();
    if (input.signal.aborted) return;
    attempt += 1;
    const base = Math.min(timing.initialBackoffMs * 2 ** (attempt - 1), timing.maxBackoffMs);
    const delay = Math.round(base / 2 + (Math.random() * base) / 2);
    input.emit({ type: 'reconnecting', attempt, delay_ms: delay, error });
    await deps.clock.sleep(delay, input.signal).catch(() => undefined);
  }
}

/** Reads one connection's messages until it ends, goes silent or is aborted; answers why it ended. */
function readEntries(
  body: NodeJS.ReadableStream,
  on: {
    idleTimeoutMs: number;
    signal: AbortSignal;
    backlog?: () => Promise<void> | undefined;
    entry: (entry: RequestLogEntry) => void;
    malformed: (message: string) => void;
  },
): Promise<string> {
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (why: string) => {
      done = true;
      clearTimeout(timer);
      on.signal.removeEventListener('abort', abort);
      (body as { destroy?: () => void }).destroy?.();
      resolve(why);
    };
    const abort = () => finish('stopped');
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(
        () => finish(`no data for ${Math.round(on.idleTimeoutMs / 1000)} s`),
        on.idleTimeoutMs,
      );
    };
    on.signal.addEventListener('abort', abort, { once: true });
    arm();
    const decoder = new StringDecoder('utf8');
    const parser = new SseParser(
      (m) => {
        if (m.event !== 'request') return;
        const entry = parseJson(m.data) as RequestLogEntry | undefined;
        if (!entry || typeof entry.id !== 'string' || typeof entry.path !== 'string') {
          on.malformed(`A log message (id ${m.id ?? '-'}) is not a request log entry.`);
          return;
        }
        on.entry(entry);
      },
      undefined,
      MAX_EVENT_CHARS,
      'the request log stream',
    );
    body.on('data', (chunk: Buffer) => {
      arm();
      try {
        parser.push(decoder.write(chunk));
      } catch (err) {
        return finish((err as Error).message);
      }
      // The output is behind: read nothing more (the server's writes wait in the socket) until it
      // caught up; the silence meanwhile is ours, not a dead connection.
      const wait = on.backlog?.();
      if (!wait) return;
      body.pause();
      clearTimeout(timer);
      void wait.then(() => {
        if (done) return;
        arm();
        body.resume();
      });
    });
    body.on('end', () => finish('the server closed the stream'));
    body.on('error', (err: Error) => finish(err.message));
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The first 4 KiB of a refusal's body, for its message. */
function readBounded(body: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    (body as { setEncoding?: (e: string) => void }).setEncoding?.('utf8');
    body.on('data', (d: string) => {
      if (text.length < 4096) text += d.slice(0, 4096 - text.length);
    });
    body.on('end', () => resolve(text));
    body.on('error', () => resolve(text));
  });
}
