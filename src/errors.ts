import { isRefused } from './platform/refused.js';

/** Exit codes every `mkt` command uses (docs/CLI.md). */
export const ExitCode = {
  ok: 0,
  error: 1,
  usage: 2,
  checkFailed: 3,
  auth: 4,
  rateLimited: 5,
  unreachable: 6,
  interrupted: 130,
  terminated: 143,
} as const;

export interface MktErrorOptions {
  /** Runnable commands or short instructions that fix the problem. */
  hints?: string[];
  cause?: unknown;
}

/** The one error hierarchy: a stable code, an exit code and hints. Library code throws these. */
export class MktError extends Error {
  readonly code: string;
  readonly exitCode: number;
  readonly hints: string[];
  /** The server's id of the request that failed (`X-Request-Id`), for its request log and support. */
  requestId: string | undefined;

  constructor(
    code: string,
    message: string,
    exitCode: number = ExitCode.error,
    options: MktErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MktError';
    this.code = code;
    this.exitCode = exitCode;
    this.hints = options.hints ?? [];
  }
}

/** `error` with the request id of the response that caused it, when the server sent one. */
export function withRequestId<E extends MktError>(error: E, requestId: unknown): E {
  if (typeof requestId === 'string' && /^[\x21-\x7e]{1,100}$/.test(requestId)) error.requestId = requestId;
  return error;
}

/** Bad flags, arguments or input: the user can fix the command line (exit 2). */
export class UsageError extends MktError {
  constructor(message: string, options: MktErrorOptions & { code?: string } = {}) {
    super(options.code ?? 'usage', message, ExitCode.usage, options);
  }
}

/**
 * A check answered "no": a feature not allowed, a signature that does not verify (exit 3). With
 * --json the check's own result (`document`) is printed, as when it says yes, and the reason goes to
 * stderr.
 */
export class CheckFailedError extends MktError {
  readonly document: unknown;
  constructor(code: string, message: string, options: MktErrorOptions & { document?: unknown } = {}) {
    super(code, message, ExitCode.checkFailed, options);
    this.document = options.document;
  }
}

/** Authentication is missing, expired or refused (exit 4). */
export class AuthError extends MktError {
  constructor(code: string, message: string, options: MktErrorOptions = {}) {
    super(code, message, ExitCode.auth, { hints: ['mkt login'], ...options });
  }
}

/** The server kept answering 429 after the retries we allow (exit 5). */
export class RateLimitError extends MktError {
  constructor(message: string, options: MktErrorOptions = {}) {
    super('rate_limited', message, ExitCode.rateLimited, options);
  }
}

/** The site could not be reached: DNS, refused connection, reset, timeout (exit 6). */
export class UnreachableError extends MktError {
  constructor(message: string, options: MktErrorOptions = {}) {
    super('unreachable', message, ExitCode.unreachable, options);
  }
}

/** The server answered with an error status (exit 1 unless a subclass says otherwise). */
export class ApiError extends MktError {
  readonly status: number;
  constructor(status: number, code: string, message: string, options: MktErrorOptions = {}) {
    super(code, message, ExitCode.error, options);
    this.status = status;
  }
}

/** The user pressed Ctrl-C or closed a prompt (exit 130). */
export class InterruptedError extends MktError {
  constructor(message = 'Interrupted.') {
    super('interrupted', message, ExitCode.interrupted);
  }
}

/** The process was asked to stop (SIGTERM) and did so cleanly (exit 143). */
export class TerminatedError extends MktError {
  constructor(message = 'Terminated.') {
    super('terminated', message, ExitCode.terminated);
  }
}

/** The person answered "no" to a confirmation: not a failure to report, but not done either (exit 1). */
export class DeclinedError extends MktError {
  constructor() {
    super('declined', 'Nothing was changed.', ExitCode.error);
  }
}

/** Turns anything thrown into an MktError; unknown errors become `internal` (exit 1) and keep their message. */
export function toMktError(err: unknown): MktError {
  if (err instanceof MktError) return err;
  if (isRefused(err))
    return new MktError(err.code, err.message, err.usage ? ExitCode.usage : ExitCode.error, {
      hints: err.hints,
    });
  if (err instanceof Error) {
    const e = new MktError('internal', err.message || String(err), ExitCode.error, { cause: err });
    e.stack = err.stack;
    return e;
  }
  return new MktError('internal', String(err));
}
