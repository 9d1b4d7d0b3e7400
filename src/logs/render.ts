import type { Style } from '../output/colour.js';
import type { Output } from '../output/output.js';
import { safeText } from '../output/safe-text.js';

/** A server's value, shown safely on a terminal (control characters escaped). */
const printable = (value: unknown): string =>
  safeText(value === undefined || value === null ? '' : String(value));
import type { RequestLogEntry } from './filter.js';
import type { TailEvent } from './tail.js';

/** `plan_id=pro-monthly app_id=app_1`: the request's path parameters as the log kept them. */
const paramWords = (params: Record<string, unknown>): string =>
  Object.entries(params)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');

/** Green for 2xx and 3xx, yellow for 4xx, red for 5xx (only on a colour terminal). */
function statusColour(status: number): Style {
  return status >= 500 ? 'red' : status >= 400 ? 'yellow' : 'green';
}

/** One request as a line: time, status, method, path, latency, credential, user, request id, error code. */
export function logLine(out: Output, e: RequestLogEntry): string {
  const status = Number(e.status);
  const credential = e.credential ? `${printable(e.credential.kind)}:${printable(e.credential.id)}` : '-';
  return [
    printable(e.at),
    out.paint(statusColour(status), printable(e.status)),
    printable(e.method).padEnd(6),
    printable(e.params && Object.keys(e.params).length > 0 ? `${e.path} ${paramWords(e.params)}` : e.path),
    `${printable(e.latency_ms)} ms`,
    credential,
    e.user_id ? printable(e.user_id) : '-',
    printable(e.id),
    e.error_code ? printable(e.error_code) : '',
  ]
    .join('  ')
    .trimEnd();
}

/**
 * The one renderer of `logs tail`: requests on stdout (a line each, or the entry as a JSON line with
 * --json), progress on stderr (JSON lines with --json).
 */
export function tailRenderer(out: Output, options: { json: boolean }): (event: TailEvent) => void {
  return (event) => {
    if (event.type === 'request') {
      const line = options.json ? out.jsonLine(JSON.stringify(event.entry)) : logLine(out, event.entry);
      if (line !== undefined) out.data(line);
      return;
    }
    if (options.json) return out.info(JSON.stringify(event));
    if (event.type === 'ready')
      out.info(`Tailing the request log of ${printable(event.app_id)}; press Ctrl-C to stop.`);
    else if (event.type === 'reconnecting')
      out.warn(`Lost the log stream (${printable(event.error)}); reconnecting in ${event.delay_ms} ms.`);
    else out.warn(event.message);
  };
}
