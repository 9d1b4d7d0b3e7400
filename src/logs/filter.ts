import { UsageError } from '../errors.js';

/** A request log entry as the marketplace streams it (docs/PROTOCOL.md, request log); unknown fields are kept. */
export interface RequestLogEntry {
  id: string;
  at: string;
  method: string;
  path: string;
  /** The path's parameters that are well-formed ids, by name (a sandbox of this version on). */
  params?: Record<string, string>;
  status: number;
  latency_ms: number;
  credential?: { kind: string; id: string } | null;
  user_id?: string | null;
  error_code?: string | null;
  [field: string]: unknown;
}

/** Which entries `mkt logs tail` shows. */
export type LogFilter = (entry: RequestLogEntry) => boolean;

/**
 * Reads `--status` (`404`, `4xx`, `2xx,5xx`) and `--path` (a path and everything below it, or a
 * pattern with `*`; with or without the `/api/v1` prefix) into one test. Bad input is a usage error.
 */
export function logFilter(input: { status?: string; path?: string }): LogFilter {
  const statuses = input.status === undefined ? undefined : statusTest(input.status);
  const paths = input.path === undefined ? undefined : pathTest(input.path);
  return (entry) =>
    (statuses === undefined || statuses(Number(entry.status))) &&
    (paths === undefined || paths(String(entry.path)));
}

function statusTest(text: string): (status: number) => boolean {
  const parts = text
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .filter(Boolean);
  const bad = parts.find((p) => !/^[1-5](\d\d|xx)$/.test(p));
  if (parts.length === 0 || bad !== undefined) {
    throw new UsageError(
      `--status "${text}" is not a status: use a code (404), a class (4xx) or a list (4xx,500).`,
      { code: 'invalid_status_filter' },
    );
  }
  return (status) =>
    parts.some((p) => (p.endsWith('xx') ? Math.floor(status / 100) === Number(p[0]) : status === Number(p)));
}

const API_PREFIX = '/api/v1';

function pathTest(pattern: string): (path: string) => boolean {
  if (!pattern.startsWith('/')) {
    throw new UsageError(`--path "${pattern}" must start with "/" (for example /apps or /api/v1/whoami).`, {
      code: 'invalid_path_filter',
    });
  }
  let test: (path: string) => boolean;
  if (pattern.includes('*')) {
    const source = pattern
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    const re = new RegExp(`^${source}$`);
    test = (path) => re.test(path);
  } else {
    const base = pattern.replace(/\/+$/, '') || '/';
    test = (path) => path === base || path.startsWith(base === '/' ? '/' : `${base}/`);
  }
  // `/whoami` means the API's `/api/v1/whoami` too: the log records full paths.
  return (path) => test(path) || (path.startsWith(`${API_PREFIX}/`) && test(path.slice(API_PREFIX.length)));
}
