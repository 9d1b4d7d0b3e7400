import type { Context } from 'hono';
import { isDiskFull } from '../storage/database.js';
import type { SandboxEnv } from './env.js';
import { errorPage, page } from './layout.js';

/** How a problem is answered: the API's error body, RFC 6749's token-endpoint body, or a page. */
export type ProblemForm = 'api' | 'oauth' | 'page';

/**
 * The sandbox's one HTTP error: a status, a stable code and a sentence, answered by
 * {@link answerProblem} as the API's `{"error": {"code", "message"}}` (docs/PROTOCOL.md, Errors), as
 * `{"error", "error_description"}` at the token endpoint, or as an error page.
 */
export class SandboxApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly form?: ProblemForm,
  ) {
    super(message);
    this.name = 'SandboxApiError';
  }
}

/** Shorthand for a 400 `invalid_request` naming the offending field. */
export function invalidRequest(message: string): SandboxApiError {
  return new SandboxApiError(400, 'invalid_request', message);
}

/** What must not be cached: tokens (RFC 6749 §5.1) and every error answer. */
export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** An OAuth endpoint's error as it leaves the endpoint: with NO_STORE; any other error unchanged. */
export function noStoreError(error: unknown): unknown {
  if (!(error instanceof SandboxApiError && error.form === 'oauth')) return error;
  return new SandboxApiError(
    error.status,
    error.code,
    error.message,
    { ...NO_STORE, ...error.headers },
    'oauth',
  );
}

/** A token-endpoint failure, answered in RFC 6749 section 5.2 form. */
export function oauthError(
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): SandboxApiError {
  return new SandboxApiError(status, code, message, headers, 'oauth');
}

/** A failure shown on a page (the consent flow): never redirected. */
export function pageError(code: string, message: string, status = 400): SandboxApiError {
  return new SandboxApiError(status, code, message, {}, 'page');
}

/** A write refused because the disk is full: nothing was stored; reads still work. */
export function diskFull(): SandboxApiError {
  return new SandboxApiError(
    507,
    'insufficient_storage',
    'The sandbox could not store this change: its disk is full. Nothing was changed; free some space and retry.',
  );
}

/** What a failure is answered as: itself, 507 for a full disk, else 500. */
export function problemOf(error: unknown): SandboxApiError {
  if (error instanceof SandboxApiError) return error;
  if (isDiskFull(error)) return diskFull();
  const message = error instanceof Error ? error.message : String(error);
  return new SandboxApiError(500, 'internal_error', `Unexpected sandbox error: ${message}`);
}

/** The one error handler: every failure of every route is answered here. */
export function answerProblem(error: unknown, c: Context<SandboxEnv>): Response {
  const problem = problemOf(error);
  const form = problem.form ?? (c.req.path.startsWith('/api/') ? 'api' : 'page');
  const headers = { ...NO_STORE, ...problem.headers };
  if (form === 'page') {
    const title = c.req.path.startsWith('/oauth/') ? 'Authorization failed' : 'Error';
    const res = page(c, problem.status, errorPage(title, problem.code, problem.message));
    for (const name in problem.headers) res.headers.set(name, problem.headers[name]!);
    return res;
  }
  const body =
    form === 'oauth'
      ? { error: problem.code, error_description: problem.message }
      : { error: { code: problem.code, message: problem.message } };
  return c.json(body, problem.status as 400, headers);
}
