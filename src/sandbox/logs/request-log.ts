import { randomBytes } from 'node:crypto';

/** How many requests are kept per app (docs/DECISIONS.md §6). */
export const REQUEST_LOG_KEPT = 10_000;

/** One API request as the log keeps it: never a secret, a token, a query or a body. */
export interface RequestLogRecord {
  id: string;
  at: string;
  method: string;
  path: string;
  /** The path's parameters that are well-formed ids (`plan_id: "pro-monthly"`), by the route's names. */
  params: Record<string, string>;
  status: number;
  latency_ms: number;
  credential: { kind: 'test_key' | 'live_key' | 'token'; id: string };
  user_id: string | null;
  error_code: string | null;
}

/** Which records a listing or a stream shows: `status` `404`, `4xx` or a list; `path` a prefix. */
export interface RequestLogQuery {
  status?: string;
  path?: string;
}

/** A test for a query; undefined when `status` cannot be read (the caller answers 400). */
export function requestLogFilter(query: RequestLogQuery): ((r: RequestLogRecord) => boolean) | undefined {
  const parts = (query.status ?? '')
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .filter(Boolean);
  if (parts.some((p) => !/^[1-5](\d\d|xx)$/.test(p))) return undefined;
  const path = query.path ?? '';
  return (r) =>
    (parts.length === 0 ||
      parts.some((p) =>
        p.endsWith('xx') ? Math.floor(r.status / 100) === Number(p[0]) : r.status === Number(p),
      )) &&
    r.path.startsWith(path);
}

/** A kept request: what its record is made of, and the record once something has read it. */
interface Entry {
  request: FinishedRequest;
  record?: RequestLogRecord;
}

const recordOf = (e: Entry): RequestLogRecord => (e.record ??= requestRecord(e.request));

/**
 * The newest requests of each app, in memory (a restart starts it empty), with listeners for the
 * live stream. Appending is O(1) amortized; the oldest records fall off past {@link REQUEST_LOG_KEPT}.
 * A request is kept as it finished and made into its record when first read: every API request is
 * appended, few are ever read.
 */
export class RequestLog {
  private readonly byApp = new Map<string, Entry[]>();
  private readonly listeners = new Map<string, Set<(r: RequestLogRecord) => void>>();

  constructor(private readonly kept = REQUEST_LOG_KEPT) {}

  /** Keeps a finished request and hands its record to the app's listeners. */
  append(appId: string, request: FinishedRequest): void {
    let entries = this.byApp.get(appId);
    if (!entries) this.byApp.set(appId, (entries = []));
    const entry: Entry = { request };
    entries.push(entry);
    // Trimmed in batches: one copy per kept/10 appends, not one per append.
    if (entries.length > this.kept + Math.ceil(this.kept / 10)) entries.splice(0, entries.length - this.kept);
    const listeners = this.listeners.get(appId);
    if (listeners?.size) for (const listener of listeners) listener(recordOf(entry));
  }

  /** The app's kept records, oldest first (at most {@link REQUEST_LOG_KEPT}). */
  records(appId: string): RequestLogRecord[] {
    const entries = this.byApp.get(appId) ?? [];
    return (entries.length > this.kept ? entries.slice(-this.kept) : entries).map(recordOf);
  }

  /** The kept records after the one with `id` (all of them when it is no longer kept). */
  after(appId: string, id: string): RequestLogRecord[] {
    const records = this.records(appId);
    const at = records.findLastIndex((r) => r.id === id);
    return at < 0 ? records : records.slice(at + 1);
  }

  /** Calls `listener` with each new record of the app until the returned function is called. */
  subscribe(appId: string, listener: (r: RequestLogRecord) => void): () => void {
    let set = this.listeners.get(appId);
    if (!set) this.listeners.set(appId, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  /** Forgets an app's records (the app was deleted). */
  forget(appId: string): void {
    this.byApp.delete(appId);
  }
}

/** Who made a request, as the log names it (never the secret). */
export type LoggedCaller =
  | { kind: 'key'; key: { id: string; mode: 'test' | 'live' }; app: { id: string } }
  | { kind: 'token'; user: { id: string }; app: { id: string }; family: string };

/**
 * A new request id (`req_…`), for the `X-Request-Id` header and the log: unique, not secret (it is
 * shown in pages and errors), so a random prefix per process and a counter, not fresh random bytes
 * for each request (a kernel call each, a measured share of a read's time).
 */
const requestIdPrefix = randomBytes(6).toString('hex');
let requestCount = 0;
export function newRequestId(): string {
  return `req_${requestIdPrefix}${(++requestCount).toString(16).padStart(12, '0')}`;
}

/** A finished API request: when it started and ended, what was asked, who asked, how it ended. */
export interface FinishedRequest {
  id: string;
  startedAt: number;
  now: number;
  method: string;
  url: string;
  /** The route the router matched (`/api/v1/apps/:app_id/plans`), or a catch-all when none did. */
  route: string;
  status: number;
  caller: LoggedCaller;
  errorCode?: string;
}

/** What the log says of a request that matched no route (the caller's text is not kept). */
export const UNMATCHED_PATH = '(no route)';

/**
 * The log record of a finished API request: the caller's credential kind and id, the user it acted
 * for, and the route the router matched, never the raw path (docs/PROTOCOL.md, Request log).
 */
export function requestRecord(input: FinishedRequest): RequestLogRecord {
  const { caller } = input;
  const path = input.route.endsWith('*') ? UNMATCHED_PATH : input.route;
  let user: string | null = null;
  if (caller.kind === 'token') user = caller.user.id;
  else {
    const query = new URLSearchParams(input.url.split('?')[1] ?? '');
    user = /^usr_[\w-]{1,64}$/.test(query.get('user_id') ?? '') ? query.get('user_id') : null;
  }
  return {
    id: input.id,
    at: new Date(input.startedAt).toISOString(),
    method: input.method,
    path,
    params: path === UNMATCHED_PATH ? {} : pathParams(input.route, input.url),
    status: input.status,
    latency_ms: Math.round((input.now - input.startedAt) * 10) / 10,
    credential:
      caller.kind === 'key'
        ? { kind: caller.key.mode === 'live' ? 'live_key' : 'test_key', id: caller.key.id }
        : { kind: 'token', id: caller.family },
    user_id: user,
    error_code: input.errorCode ?? null,
  };
}

/** What a path parameter must look like to be kept: an id, a slug (never free text). */
const ID_SHAPE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/**
 * The values of the route's `:name` segments in the request's path, each kept only when it has the
 * shape of an id ({@link ID_SHAPE}); never the query string.
 */
export function pathParams(route: string, url: string): Record<string, string> {
  const params: Record<string, string> = {};
  const names = route.split('/');
  const values = url.split('?', 1)[0]!.split('/');
  if (names.length !== values.length) return params;
  names.forEach((name, i) => {
    if (!name.startsWith(':')) return;
    let value: string;
    try {
      value = decodeURIComponent(values[i]!);
    } catch {
      return;
    }
    if (ID_SHAPE.test(value)) params[name.slice(1)] = value;
  });
  return params;
}

/** The parameters as `name=value` words (empty when there are none). */
export function paramsText(params: Record<string, string> | undefined): string {
  return Object.entries(params ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
}

/**
 * The apps whose logs a request belongs in: the caller's app, and the app its path names when the
 * caller may manage that one (`ownerOf` answers an app's developer).
 */
export function loggedApps(
  caller: LoggedCaller,
  url: string,
  ownerOf: (appId: string) => string | undefined,
): string[] {
  const named = /^\/api\/v1\/apps\/(app_[A-Za-z0-9_-]{1,64})(?:[/?]|$)/.exec(url)?.[1];
  if (!named || named === caller.app.id) return [caller.app.id];
  const mine = caller.kind === 'token' && ownerOf(named) === caller.user.id;
  return mine ? [caller.app.id, named] : [caller.app.id];
}
