/** A failure the sandbox answers with an HTTP status, a stable code and extra headers. */
abstract class SandboxHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * A sandbox API failure, answered as `{"error": {"code", "message"}}` (docs/PROTOCOL.md, Errors).
 * Not the CLI's `ApiError`.
 */
export class SandboxApiError extends SandboxHttpError {}

/** A sandbox token-endpoint failure, answered in RFC 6749 section 5.2 form. */
export class SandboxOAuthError extends SandboxHttpError {}

/** Shorthand for a 400 `invalid_request` naming the offending field. */
export function invalidRequest(message: string): SandboxApiError {
  return new SandboxApiError(400, 'invalid_request', message);
}

/** A write refused because the disk is full: nothing was stored; reads still work. */
export function diskFull(): SandboxApiError {
  return new SandboxApiError(
    507,
    'insufficient_storage',
    'The sandbox could not store this change: its disk is full. Nothing was changed; free some space and retry.',
  );
}
