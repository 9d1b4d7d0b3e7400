// The refusal a door of src/platform throws: a path, a value or an input mkt will not touch, said in
// one sentence with what to do. It depends on nothing, so that the sandbox (which imports nothing of
// the CLI but src/platform) throws the same one; the CLI turns it into its MktError (toMktError),
// recognised by name because the sandbox's bundle has its own copy of this class.

/** A door said no: `code` is stable, `hints` are runnable fixes; exit code 1 (2 with `usage`). */
export class RefusedError extends Error {
  override readonly name = 'RefusedError';
  constructor(
    readonly code: string,
    message: string,
    readonly hints: string[] = [],
    readonly usage = false,
  ) {
    super(message);
  }
}

/** True for a {@link RefusedError} of either bundle (the CLI's or the sandbox's). */
export function isRefused(err: unknown): err is RefusedError {
  return (
    err instanceof Error && err.name === 'RefusedError' && typeof (err as RefusedError).code === 'string'
  );
}
