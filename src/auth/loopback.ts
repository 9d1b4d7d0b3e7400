import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { AuthError, UsageError } from '../errors.js';
import { guardLocalHost } from '../platform/local-host.js';

/** What the authorization server sent back to the redirect URI. */
export interface AuthorizationResponse {
  code: string;
}

/** A one-shot listener on 127.0.0.1 for the OAuth redirect (RFC 8252 section 7.3). */
export interface CallbackListener {
  redirectUri: string;
  /** Settles with the first callback that ends the flow: a code, or an AuthError. */
  result: Promise<AuthorizationResponse>;
  close(): Promise<void>;
}

/**
 * Reads a redirect URL's query (from the listener or pasted by the person): the code, or an
 * AuthError for `error=`, a missing code, or a `state` that is not ours.
 */
export function parseAuthorizationResponse(
  params: URLSearchParams,
  expectedState: string,
  options: { stateRequired: boolean },
): AuthorizationResponse {
  const state = params.get('state');
  if ((state !== null || options.stateRequired) && state !== expectedState) {
    throw new AuthError(
      'state_mismatch',
      'The sign-in response does not belong to this login (its state does not match); nothing was stored.',
      { hints: ['mkt login   (start again, and use only the newest browser tab)'] },
    );
  }
  const error = params.get('error');
  if (error) {
    const description = params.get('error_description');
    const message =
      error === 'access_denied'
        ? 'The sign-in was denied in the browser; nothing was stored.'
        : `The marketplace refused the sign-in: ${error}${description ? ` (${description})` : ''}.`;
    throw new AuthError(error, message, { hints: ['mkt login'] });
  }
  const code = params.get('code');
  if (!code) throw new AuthError('no_code', 'The sign-in response carries no authorization code.');
  return { code };
}

/** Starts the listener on 127.0.0.1 (`port` 0 = any free port); only GET /callback with our state ends the flow. */
export async function startCallbackListener(port: number, expectedState: string): Promise<CallbackListener> {
  const { createServer } = await import('node:http');
  let settle!: { resolve(v: AuthorizationResponse): void; reject(e: unknown): void };
  const result = new Promise<AuthorizationResponse>((resolve, reject) => (settle = { resolve, reject }));
  result.catch(() => undefined);
  let done = false;
  let actual = port;
  // Anything but the callback of this login (another path, no code, a wrong state) gets an error page
  // and the listener keeps waiting: any local process can send requests here.
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    // Only the redirect URI's own Host: `localhost` is not 127.0.0.1 everywhere, and a page may rebind it.
    if (!guardLocalHost(req, res, actual, [`127.0.0.1:${actual}`])) return;
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const params = url.searchParams;
    if (done || req.method !== 'GET' || url.pathname !== '/callback') {
      return page(res, 404, 'Not found', 'This address only receives the mkt sign-in.');
    }
    if (!params.has('code') && !params.has('error')) {
      return page(res, 400, 'Not a sign-in response', 'This request carries no code; mkt is still waiting.');
    }
    if (params.get('state') !== expectedState) {
      return page(
        res,
        400,
        'Not this sign-in',
        'This response does not belong to the sign-in mkt is waiting for (its state does not match); mkt is still waiting.',
      );
    }
    done = true;
    try {
      const response = parseAuthorizationResponse(params, expectedState, { stateRequired: true });
      page(
        res,
        200,
        'Signed in',
        'You are signed in to mkt. You can close this tab and return to the terminal.',
      );
      settle.resolve(response);
    } catch (err) {
      page(res, 400, 'Sign-in failed', `${(err as Error).message} You can close this tab.`);
      settle.reject(err);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE' || err.code === 'EACCES'
          ? new UsageError(`Cannot listen on 127.0.0.1:${port} for the sign-in (${err.code}).`, {
              code: 'port_unavailable',
              hints: ['mkt login --port 0   (any free port)'],
            })
          : err,
      ),
    );
    server.listen(port, '127.0.0.1', () => resolve());
  });
  actual = (server.address() as { port: number }).port;
  return {
    redirectUri: `http://127.0.0.1:${actual}/callback`,
    result,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 200).unref();
      }),
  };
}

function page(res: ServerResponse, status: number, title: string, text: string): void {
  const escape = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>mkt: ${escape(title)}</title></head><body style="font-family:system-ui,sans-serif;margin:4em auto;max-width:36em"><h1>${escape(title)}</h1><p>${escape(text)}</p></body></html>`;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'close',
  });
  res.end(body);
}
