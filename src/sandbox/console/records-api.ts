import { EVENT_NAMES } from '../../wire.js';
import {
  DELIVERY_STATES,
  type DeliveryQuery,
  type DeliveryRecords,
  type DeliveryState,
} from '../kernel/deliveries/delivery-records.js';
import { requestLogFilter, type RequestLog, type RequestLogRecord } from '../logs/request-log.js';

/** A request the API refuses: the status, code and message of its error answer. */
export class RecordsQueryError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const bad = (message: string) => new RecordsQueryError(400, 'invalid_request', message);

function limitOf(query: URLSearchParams, fallback: number): number {
  const text = query.get('limit');
  if (text === null) return fallback;
  if (!/^\d{1,3}$/.test(text) || Number(text) < 1 || Number(text) > 100)
    throw bad('Query parameter "limit" must be an integer from 1 to 100.');
  return Number(text);
}

/** `GET /apps/{id}/deliveries?event=&state=&limit=&cursor=`: newest first. */
export function listDeliveries(records: DeliveryRecords, appId: string, query: URLSearchParams) {
  const q: DeliveryQuery = { limit: limitOf(query, 20) };
  const event = query.get('event');
  if (event) {
    if (!(EVENT_NAMES as readonly string[]).includes(event))
      throw bad(`Query parameter "event" must be one of ${EVENT_NAMES.join(', ')}.`);
    q.event = event;
  }
  const state = query.get('state');
  if (state) {
    if (!(DELIVERY_STATES as readonly string[]).includes(state))
      throw bad(`Query parameter "state" must be one of ${DELIVERY_STATES.join(', ')}.`);
    q.state = state as DeliveryState;
  }
  const cursor = query.get('cursor');
  if (cursor !== null) {
    if (!/^\d{1,15}$/.test(cursor)) throw bad('Query parameter "cursor" is not a cursor this server issued.');
    q.cursor = Number(cursor);
  }
  return records.list(appId, q);
}

/** `GET /apps/{id}/deliveries/{dlv}`. */
export function getDelivery(records: DeliveryRecords, appId: string, id: string) {
  const delivery = records.get(appId, id);
  if (!delivery) throw new RecordsQueryError(404, 'not_found', `No delivery "${id}" of app "${appId}".`);
  return delivery;
}

/** The log filter of a query, or a 400. */
function filterOf(query: URLSearchParams) {
  const filter = requestLogFilter({
    status: query.get('status') ?? undefined,
    path: query.get('path') ?? undefined,
  });
  if (!filter)
    throw bad('Query parameter "status" must be a status (404), a class (4xx) or a list of them (4xx,500).');
  return filter;
}

/** `GET /apps/{id}/logs?since=&status=&path=&limit=&cursor=`: newest first. */
export function listRequests(log: RequestLog, appId: string, query: URLSearchParams) {
  const limit = limitOf(query, 20);
  const filter = filterOf(query);
  let records = log.records(appId);
  const since = query.get('since');
  if (since) {
    if (since.startsWith('req_')) records = log.after(appId, since);
    else if (Number.isFinite(Date.parse(since)))
      records = records.filter((r) => r.at > new Date(since).toISOString());
    else throw bad('Query parameter "since" must be a request id (req_…) or an ISO time.');
  }
  const cursor = query.get('cursor');
  let end = records.length;
  if (cursor !== null) {
    const at = records.findLastIndex((r) => r.id === cursor);
    if (at < 0)
      throw bad('Query parameter "cursor" is not a cursor this server issued (or fell out of the log).');
    end = at;
  }
  const data: RequestLogRecord[] = [];
  let i = end - 1;
  for (; i >= 0 && data.length < limit; i--) if (filter(records[i]!)) data.push(records[i]!);
  const more = i >= 0 && records.slice(0, i + 1).some(filter);
  return { data, has_more: more, next_cursor: more ? data.at(-1)!.id : null };
}

/** One log entry as a Server-Sent Event. */
export const requestEvent = (r: RequestLogRecord) =>
  `id: ${r.id}\nevent: request\ndata: ${JSON.stringify(r)}\n\n`;

/**
 * `GET /apps/{id}/logs/stream`: writes the entries after `Last-Event-ID` still kept, then each new
 * one that passes the filter, with a keep-alive comment every 15 s. Answers the function that stops it.
 */
export function streamRequests(
  log: RequestLog,
  appId: string,
  query: URLSearchParams,
  lastEventId: string | undefined,
  write: (text: string) => void,
): () => void {
  const filter = filterOf(query);
  write('retry: 1000\n\n');
  if (lastEventId) for (const r of log.after(appId, lastEventId)) if (filter(r)) write(requestEvent(r));
  const stop = log.subscribe(appId, (r) => {
    if (filter(r)) write(requestEvent(r));
  });
  const keepAlive = setInterval(() => write(': keep-alive\n\n'), 15_000);
  keepAlive.unref();
  return () => {
    stop();
    clearInterval(keepAlive);
  };
}
