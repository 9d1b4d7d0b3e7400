import type { Deps } from '../deps.js';
import { MktError } from '../errors.js';

/** A one-time sign-in link to the developer console (docs/PROTOCOL.md, console). */
export interface ConsoleLink {
  url: string;
  expires_at?: string;
  [field: string]: unknown;
}

/** The link, and whether it was opened (through a launch file only its owner can read) or why not. */
export type OpenedConsoleLink = ConsoleLink &
  ({ opened: true; launch_file: string } | { opened: false; not_opened_because?: string });

/**
 * Asks the marketplace for a fresh one-time console link (`POST /console/sessions`) with the
 * session's credential, and opens it in the browser when `open` is set. Whoever holds the link gets
 * in (once, for a few minutes), so it never reaches another process's argv or environment: the
 * browser is given a launch file, readable by this user only, that sends it on (src/platform/launcher.ts).
 */
export async function openConsole(
  deps: Pick<Deps, 'api' | 'openBrowser' | 'env'>,
  input: { open: boolean },
): Promise<OpenedConsoleLink> {
  const { data } = await deps.api.post<ConsoleLink>('/console/sessions', {});
  const url = typeof data?.url === 'string' && URL.canParse(data.url) ? new URL(data.url) : undefined;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new MktError(
      'invalid_console_link',
      'The marketplace did not answer with a console link (an http(s) URL).',
    );
  }
  const link = { ...data, url: url.href };
  if (!input.open) return { ...link, opened: false };
  const { isHeadless } = await import('../auth/login.js');
  if (isHeadless(deps.env)) {
    const because = 'no display here, and neither MKT_BROWSER nor BROWSER is set';
    return { ...link, opened: false, not_opened_because: because };
  }
  try {
    const { openPrivately } = await import('../platform/launcher.js');
    const file = await openPrivately(deps, link.url, 'Open the mkt developer console');
    return { ...link, opened: true, launch_file: file };
  } catch (error) {
    const because = error instanceof Error ? error.message : String(error);
    return { ...link, opened: false, not_opened_because: because };
  }
}
