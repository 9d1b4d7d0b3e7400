// What the wire fixes: the published interface (docs/INTERFACE.md) and our decisions where it is
// silent (docs/DECISIONS.md). The CLI and the sandbox both take these from here.

/** The published event kinds (docs/INTERFACE.md §6). */
export const EVENT_NAMES = [
  'user.authorized',
  'subscription.created',
  'subscription.cancelled',
  'user.revoked',
] as const;

/** An event kind. */
export type EventName = (typeof EVENT_NAMES)[number];

/** Request headers, lower-cased as Node presents them (docs/INTERFACE.md §4.5, §5; docs/DECISIONS.md §2). */
export const HEADER = {
  signature: 'x-marketplace-signature',
  delivery: 'x-marketplace-delivery',
  /** The event kind, beside the body (ours, for filtering before parsing). */
  event: 'x-marketplace-event',
  apiKey: 'x-api-key',
  /** The id the marketplace gives every API response (`req_…`), as its request log names it. */
  requestId: 'x-request-id',
} as const;

/** Requests per minute allowed for each kind of API key (docs/INTERFACE.md §8). */
export const RATE_LIMITS = { test: 100, live: 1000 } as const;

/** Where the sandbox listens by default, and so the site used when nothing else is set. */
export const DEFAULT_SANDBOX_PORT = 7878;

/** The default site: the sandbox on its default port. */
export const DEFAULT_SITE_URL = `http://127.0.0.1:${DEFAULT_SANDBOX_PORT}`;
