import type { Deps } from '../deps.js';
import { MktError } from '../errors.js';

/** A one-time sign-in link to the developer console (docs/PROTOCOL.md, console). */
export interface ConsoleLink {
  url: string;
  expires_at?: string;
  [field: string]: unknown;
}

/**
 * Asks the marketplace for a fresh one-time console link (`POST /console/sessions`) with the
 * session's credential, and opens it in the browser when `open` is set. The link works once, for
 * a few minutes; whoever holds it gets in, so it is never written to a file or a log.
 */
export async function openConsole(
  deps: Pick<Deps, 'api' | 'openBrowser'>,
  input: { open: boolean },
): Promise<ConsoleLink & { opened: boolean }> {
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
  try {
    await deps.openBrowser(link.url);
    return { ...link, opened: true };
  } catch {
    return { ...link, opened: false };
  }
}
