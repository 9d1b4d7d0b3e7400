import { z } from 'zod';

// The parts every route declaration shares (./declare.ts): the two error bodies, the headers the
// sandbox sends, and the answers of the API, the OAuth endpoints and the pages. An error is thrown
// (SandboxApiError) and answered by one handler (./problem.ts); its statuses are declared here per
// route, so that the document lists each status a route really answers.

/** Every API failure (docs/PROTOCOL.md, Errors). */
export const ApiError = z
  .strictObject({
    error: z.strictObject({
      code: z.string().regex(/^[a-z][a-z0-9_]*$/),
      message: z.string(),
    }),
  })
  .meta({ id: 'Error', description: 'Every API failure (docs/PROTOCOL.md, Errors)' });

/** An OAuth endpoint's failure (RFC 6749 §5.2, RFC 8628 §3.5). */
export const OAuthError = z
  .strictObject({ error: z.string().regex(/^[a-z][a-z0-9_]*$/), error_description: z.string() })
  .meta({ id: 'OAuthError', description: 'An OAuth endpoint failure (RFC 6749 §5.2)' });

const digits = z.string().regex(/^\d+$/);
/** On every answer of the sandbox. */
const REQUEST_ID = {
  'X-Request-Id': z.string().meta({ description: 'This request, as the request log names it' }),
};
/** On every answer of an authenticated API request (docs/DECISIONS.md §2, rate limits). */
const RATE = {
  ...REQUEST_ID,
  'X-RateLimit-Limit': digits.meta({ description: 'Requests allowed a minute' }),
  'X-RateLimit-Remaining': digits.meta({ description: 'Requests left in this minute' }),
  'X-RateLimit-Reset': digits.meta({ description: 'When the minute ends (Unix seconds)' }),
};
/** On a refusal: the rate-limit headers only once the request was counted (not on 400/413 before routing). */
const RATE_IF_COUNTED = {
  ...REQUEST_ID,
  'X-RateLimit-Limit': RATE['X-RateLimit-Limit'].optional(),
  'X-RateLimit-Remaining': RATE['X-RateLimit-Remaining'].optional(),
  'X-RateLimit-Reset': RATE['X-RateLimit-Reset'].optional(),
};
const NO_STORE_HEADERS = {
  ...REQUEST_ID,
  'Cache-Control': z.literal('no-store'),
  Pragma: z.literal('no-cache'),
};

/** The statuses an error may be declared with. */
export type ErrorStatus = 400 | 401 | 402 | 403 | 404 | 409 | 413 | 415 | 429 | 507;

const WHAT: Record<ErrorStatus, string> = {
  400: 'Refused: a parameter or field is missing or invalid, or a query parameter is unknown or repeated',
  401: 'Not authenticated',
  402: 'The simulated payment was declined',
  403: 'Authenticated, but not allowed',
  404: 'Not found (or not yours)',
  409: 'In conflict with the current state',
  413: 'The body is larger than 1 MiB',
  415: 'The body is not JSON in UTF-8',
  429: 'Over the rate limit',
  507: "The sandbox's disk is full: nothing was changed",
};

export const errorAnswer = (status: ErrorStatus) => ({
  description: WHAT[status],
  headers: z.object(
    status === 401
      ? { ...REQUEST_ID, 'WWW-Authenticate': z.string().meta({ description: 'RFC 6750 §3' }) }
      : status === 429
        ? { ...RATE, 'Retry-After': digits.meta({ description: 'Seconds until the limit resets' }) }
        : RATE_IF_COUNTED,
  ),
  content: { 'application/json': { schema: ApiError } },
});
type ErrorAnswer = ReturnType<typeof errorAnswer>;

/** Statuses every authenticated API operation may answer: 400 (query), 401, 429. */
const API_BASE = [400, 401, 429] as const;

/** The error answers of an API operation: 400, 401 and 429, and `more`. */
export function apiErrors<const S extends readonly ErrorStatus[]>(
  ...more: S
): Record<S[number] | (typeof API_BASE)[number], ErrorAnswer> {
  const out: Partial<Record<ErrorStatus, ErrorAnswer>> = {};
  for (const s of [...API_BASE, ...more].sort()) out[s] = errorAnswer(s);
  return out as Record<S[number] | (typeof API_BASE)[number], ErrorAnswer>;
}

/** The errors of a write with a JSON body: 400, 401, 413, 415, 429 and 507, and `more`. */
export const writeErrors = <const S extends readonly ErrorStatus[]>(...more: S) =>
  apiErrors(413, 415, 507, ...more);

/** A JSON answer of the authenticated API, with its rate-limit headers. */
export const apiJson = <S extends z.ZodType>(description: string, schema: S) => ({
  description,
  headers: z.object(RATE),
  content: { 'application/json': { schema } },
});

/** An answer without a body (204) of the authenticated API. */
export const apiNoContent = (description: string) => ({ description, headers: z.object(RATE) });

/** A Server-Sent Events stream of the authenticated API. */
export const apiStream = (description: string) => ({
  description,
  headers: z.object(RATE),
  content: { 'text/event-stream': { schema: z.string() } },
});

/** A JSON answer of an open endpoint (`cache-control: no-store` when `noStore`). */
export const openJson = <S extends z.ZodType>(description: string, schema: S, noStore = false) => ({
  description,
  headers: z.object(noStore ? NO_STORE_HEADERS : REQUEST_ID),
  content: { 'application/json': { schema } },
});

/** An OAuth endpoint's refusal in RFC 6749 §5.2 form; 401 with `WWW-Authenticate` after HTTP Basic. */
export const oauthErrorAnswer = (status: 400 | 401 | 413 | 415, description: string) => ({
  description,
  headers: z.object(
    status === 401 ? { ...NO_STORE_HEADERS, 'WWW-Authenticate': z.string().optional() } : NO_STORE_HEADERS,
  ),
  content: { 'application/json': { schema: OAuthError } },
});

/** A page (HTML) of the sandbox; its failures are pages too. */
export const pageAnswer = (description: string) => ({
  description,
  headers: z.object(REQUEST_ID),
  content: { 'text/html': { schema: z.string() } },
});

/** A redirection (`Location`). */
export const redirectAnswer = (description: string) => ({
  description,
  headers: z.object({ ...REQUEST_ID, Location: z.string().meta({ format: 'uri-reference' }) }),
});

/** Security of the authenticated API: an API key or a Bearer token. */
export const API_SECURITY: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }];
/** An open operation. */
export const PUBLIC: [] = [];

/** The statuses a page may fail with. */
export type PageErrorStatus = 400 | 403 | 404 | 413 | 429;

/** A page's failures: an error page with each status. */
export function pageErrors<const S extends readonly PageErrorStatus[]>(
  ...statuses: S
): Record<S[number], ReturnType<typeof pageAnswer>> {
  const what: Record<PageErrorStatus, string> = {
    400: 'An error page: a parameter or field is missing or invalid',
    403: 'An error page: the form was sent from another site, or lacks its anti-CSRF token',
    404: 'An error page: not found, or the link has expired',
    413: 'An error page: the form is larger than 1 MiB',
    429: 'An error page: too many wrong codes or pending requests; `Retry-After` says when to retry',
  };
  return Object.fromEntries(statuses.map((s) => [s, pageAnswer(what[s])])) as Record<
    S[number],
    ReturnType<typeof pageAnswer>
  >;
}

/** Client authentication at the OAuth endpoints: HTTP Basic, or `client_secret` in the body. */
export const CLIENT_SECURITY: Array<Record<string, string[]>> = [{ clientBasic: [] }, {}];
