import type { Credential } from '../api/client.js';
import { describeSiteSource, type Deps } from '../deps.js';
import { accounts } from '../credentials/accounts.js';
import { storedClientSecret } from '../credentials/client-secret.js';
import { AuthError, MktError, UsageError } from '../errors.js';
import { safeText } from '../output/safe-text.js';
import { promptSecret } from '../platform/prompts.js';
import { type AuthorizationResponse, parseAuthorizationResponse, startCallbackListener } from './loopback.js';
import { newAuthorizationSecrets } from './pkce.js';
import { oauthEndpoints, tokenRequest } from './token-endpoint.js';
import { makeRoomFor } from './accounts.js';
import { markSignedIn } from './profiles.js';
import { type StoredToken, tokenFromResponse } from './session.js';

/** The scopes `mkt login` always asks for; `--scope` adds to them. */
const DEFAULT_SCOPES = ['identity:read', 'entitlements:read'];

/** The user profile `GET /whoami` answers. */
export interface Profile {
  id: string;
  email?: string;
  name?: string;
  [field: string]: unknown;
}

export interface LoginInput {
  clientId?: string;
  scopes?: string[];
  port?: number;
  /** Print the URL and read the pasted redirect URL or code from stdin instead of opening a browser. */
  noBrowser?: boolean;
  timeoutSeconds?: number;
}

/** True where no browser can be opened for the person: SSH sessions, Linux without a display. */
export function isHeadless(env: Record<string, string | undefined>): boolean {
  // A browser command the person configured is trusted to work (it may not need a display).
  if (env.MKT_BROWSER || env.BROWSER) return false;
  if (env.SSH_CONNECTION || env.SSH_TTY) return true;
  return process.platform === 'linux' && !env.DISPLAY && !env.WAYLAND_DISPLAY;
}

/**
 * Whether a person could paste into stdin: a terminal, or a pipe or socket (`ssh host mkt login`
 * forwards what they type through one). Not /dev/null, a file, or a closed stdin (cron, CI, a container).
 */
export async function canPaste(stdin: { isTTY?: boolean; fd?: number }): Promise<boolean> {
  if (stdin.isTTY) return true;
  if (stdin.fd === undefined) return true; // not a file descriptor (a stream in-process): someone writes to it
  const { fstatSync } = await import('node:fs');
  try {
    const info = fstatSync(stdin.fd);
    return info.isFIFO() || info.isSocket();
  } catch {
    return false; // closed
  }
}

/** `mkt login`: the authorization code flow with PKCE and state through a loopback listener. */
export async function loginWithBrowser(deps: Deps, input: LoginInput): Promise<StoredToken> {
  const clientId = await resolveClientId(deps, input.clientId);
  const { secret: clientSecret, stored: secretStored } = await clientSecretFor(deps, clientId);
  const scopes = scopeString(input.scopes);
  const { authorize } = await oauthEndpoints(deps);
  const { verifier, challenge, state } = newAuthorizationSecrets();
  const listener = await startCallbackListener(input.port ?? 0, state);
  const abort = new AbortController();
  try {
    const redirectUri = listener.redirectUri;
    const authorizeUrl = new URL(authorize);
    for (const [k, v] of Object.entries({
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: scopes,
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }))
      authorizeUrl.searchParams.set(k, v);
    const clientIdFrom = input.clientId
      ? '--client-id'
      : `the client-id setting of profile "${deps.profile}"`;
    await preflight(deps, authorizeUrl, { clientId, clientIdFrom, port: input.port }, redirectUri);

    const headless = input.noBrowser || isHeadless(deps.env);
    const waits: Array<Promise<AuthorizationResponse>> = [listener.result];
    if (headless) {
      deps.out.info(
        `Open this URL in a browser on any machine and approve the sign-in:\n\n  ${authorizeUrl.href}\n`,
      );
      deps.out.info(
        `Then paste the address the browser was sent to (${redirectUri}?code=…), or just the code, and press Enter.`,
      );
      waits.push(readPasted(deps, state, abort.signal));
    } else {
      deps.out.info(`Opening ${authorizeUrl.href} in your browser.`);
      deps.out.info('If it does not open, visit that URL yourself; waiting for the sign-in…');
      await deps.openBrowser(authorizeUrl.href).catch((err: Error) => {
        deps.out.warn(`Could not open a browser (${err.message}); open the URL above yourself.`);
      });
    }
    const timeoutSeconds = input.timeoutSeconds ?? 300;
    waits.push(
      deps.clock.sleep(timeoutSeconds * 1000, abort.signal).then(() => {
        throw new AuthError(
          'login_timeout',
          `Nobody finished the sign-in within ${timeoutSeconds} s; nothing was stored.`,
          {
            hints: [
              'mkt login --timeout 600',
              'mkt login --no-browser   (to paste the redirect URL by hand)',
            ],
          },
        );
      }),
    );
    const { code } = await Promise.race(waits);

    let res;
    try {
      res = await tokenRequest(deps, {
        grant_type: 'authorization_code',
        code,
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uri: redirectUri,
        code_verifier: verifier,
      });
    } catch (err) {
      throw explainTokenError(deps, err, clientId, redirectUri, input.port);
    }
    return await finishSignIn(deps, res.data, { clientId, clientSecret, secretStored, scopes });
  } finally {
    abort.abort();
    await listener.close();
  }
}

/** The client id: `--client-id`, else the profile's setting, else a usage error saying where to find one. */
export async function resolveClientId(deps: Deps, given: string | undefined): Promise<string> {
  const clientId = given ?? (await deps.config.get(deps.profile, 'client-id'));
  if (clientId) return clientId;
  throw new UsageError(
    `No OAuth client id: pass --client-id (the client_id of your app, cid_…), or store one for profile "${deps.profile}" with \`mkt config set client-id\`.`,
    {
      code: 'client_id_required',
      hints: [
        `mkt apps list${flags(deps)}   (shows each app's client_id, when signed in as its developer)`,
        `mkt login${flags(deps)} --client-id cid_…`,
      ],
    },
  );
}

/** The scopes to ask for: the defaults and `--scope`, space-separated. */
export function scopeString(extra: string[] | undefined): string {
  return [...new Set([...DEFAULT_SCOPES, ...(extra ?? [])].flatMap((s) => s.split(/[\s,]+/)))]
    .filter(Boolean)
    .join(' ');
}

/**
 * After a token endpoint granted tokens (any grant): checks them with /whoami, stores them as the
 * profile's active account, keeps the client secret that worked, and says who is signed in.
 */
export async function finishSignIn(
  deps: Deps,
  data: Record<string, unknown> | undefined,
  grant: { clientId: string; clientSecret: string; secretStored: boolean; scopes: string },
): Promise<StoredToken> {
  const { clientId, clientSecret, secretStored, scopes } = grant;
  const token = tokenFromResponse(data, deps.clock.now(), {
    site_url: deps.siteUrl,
    client_id: clientId,
    scope: scopes,
  });
  const user = await fetchProfile(deps, { kind: 'token', secret: token.access_token, source: 'login' });
  token.user = { id: user.id, email: user.email, name: user.name };
  await makeRoomFor(deps, token.user);
  await deps.credentials.set(accounts.oauth(deps.profile), JSON.stringify(token));
  await deps.credentials.delete(accounts.apiKey(deps.profile));
  await markSignedIn(deps.credentials, deps.profile, true);
  // A secret that worked (from MKT_CLIENT_SECRET or the prompt) is kept: the next login does not ask.
  if (!secretStored) await deps.credentials.set(accounts.clientSecret(deps.siteUrl, clientId), clientSecret);
  await deps.config.set(deps.profile, 'client-id', clientId);
  if (deps.siteUrlSource === 'flag') await deps.config.set(deps.profile, 'site-url', deps.siteUrl);
  deps.out.success(`Logged in as ${describeUser(user)} on ${deps.siteUrl}`);
  warnAboutOverrides(deps);
  return token;
}

/** `GET /whoami` with an explicit credential (during login, before anything is stored). */
export async function fetchProfile(deps: Deps, credential: Credential): Promise<Profile> {
  const res = await deps.api.get<Profile>('/whoami', { credential });
  if (!res.data || typeof res.data.id !== 'string') {
    throw new MktError('bad_response', `${deps.siteUrl}/api/v1/whoami did not answer a user profile.`);
  }
  return res.data;
}

/**
 * "Name <email> (usr_…)" with whatever the profile has, each part as the server sent it made safe
 * for a terminal (safeText: an ESC[31m or ESC[8m in a name is shown, never obeyed, though mkt's own
 * colours in the rest of the line are kept).
 */
export function describeUser(user: { id: string; email?: string; name?: string }): string {
  const who = user.name ?? user.email ?? user.id;
  const email = user.email && user.email !== who ? ` <${safeText(user.email)}>` : '';
  return `${safeText(who)}${email} (${safeText(user.id)})`;
}

/** ` --site-url … --profile …` when a hint must repeat them to run as printed. */
export function flags(deps: Deps): string {
  return deps.hintFlags ? ` ${deps.hintFlags}` : '';
}

/** Where the site URL came from, for messages. */
export function siteSource(deps: Deps): string {
  return describeSiteSource(deps.siteUrlSource, deps.profile);
}

/** A warning for each credential in the environment that overrides the stored one. */
export function warnAboutOverrides(deps: Deps): void {
  for (const name of ['MKT_ACCESS_TOKEN', 'MKT_API_KEY'])
    if (deps.env[name]) deps.out.warn(`${name} is set and takes precedence over the stored sign-in.`);
}

/** The client secret: MKT_CLIENT_SECRET, else the one stored for this site and client id, else a prompt. */
export async function clientSecretFor(
  deps: Deps,
  clientId: string,
): Promise<{ secret: string; stored: boolean }> {
  const stored = await storedClientSecret(deps.credentials, deps, clientId);
  const fromEnv = deps.env.MKT_CLIENT_SECRET;
  if (fromEnv) return { secret: fromEnv, stored: fromEnv === stored };
  if (stored) return { secret: stored, stored: true };
  const secret = await promptSecret(
    deps,
    `Client secret of ${clientId}`,
    'set MKT_CLIENT_SECRET, or create the app with `mkt apps create` so its secret is stored',
  );
  if (!secret) throw new UsageError('The client secret is empty.', { code: 'client_secret_required' });
  return { secret, stored: false };
}

/** Asks the authorization endpoint first, so a wrong client id or redirect URI fails here, not in the browser. */
async function preflight(
  deps: Deps,
  url: URL,
  input: { clientId: string; clientIdFrom: string; port?: number },
  redirectUri: string,
) {
  const { clientId, port } = input;
  const res = await deps.api.request('GET', url.href, { auth: false, allowErrorStatus: true });
  if (res.status < 400 || res.status >= 500) return;
  const text = res.text.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
  if (/redirect[_ ]ur[il]/i.test(text)) throw redirectError(clientId, redirectUri, port);
  if (/client[_ ]id|invalid_client/i.test(text)) {
    throw new UsageError(
      `${deps.siteUrl} (from ${siteSource(deps)}) does not know the client id "${clientId}" (from ${input.clientIdFrom}).`,
      {
        code: 'invalid_client',
        hints: [
          `mkt apps list${flags(deps)}`,
          `mkt login${flags(deps)} --client-id cid_…   (your app's client_id)`,
        ],
      },
    );
  }
  // Anything else (a sign-in wall, a page we do not understand) is for the person to see in the browser.
}

function redirectError(clientId: string, redirectUri: string, port?: number): UsageError {
  const register = port ? redirectUri : 'http://127.0.0.1/callback';
  const extra = port
    ? ''
    : ` (a loopback URI matches any port; if the marketplace wants exact ports, run mkt login --port 8085 and register http://127.0.0.1:8085/callback)`;
  return new UsageError(
    `The marketplace does not accept the redirect URI ${redirectUri} for client ${clientId}. Register ${register} in the app's redirect URIs${extra}.`,
    { code: 'redirect_uri_not_registered', hints: ['mkt apps update --help   (to add a redirect URI)'] },
  );
}

function explainTokenError(
  deps: Deps,
  err: unknown,
  clientId: string,
  redirectUri: string,
  port?: number,
): unknown {
  if (!(err instanceof AuthError)) return err;
  if (/redirect/i.test(err.message)) return redirectError(clientId, redirectUri, port);
  if (err.code === 'invalid_client') {
    const secret = deps.env.MKT_CLIENT_SECRET ? 'MKT_CLIENT_SECRET' : 'the stored or typed client secret';
    return new AuthError(
      'invalid_client',
      `The marketplace refused client ${clientId} with ${secret}. ${err.message}`,
      {
        hints: [
          `mkt apps rotate-secret --kind client${flags(deps)}   (stores a new secret; then log in again)`,
          `MKT_CLIENT_SECRET=… mkt login${flags(deps)}   (with the secret your app was given)`,
        ],
      },
    );
  }
  if (err.code === 'invalid_grant') {
    return new AuthError('invalid_grant', `The code exchange failed. ${err.message}`, {
      hints: [`mkt login${flags(deps)}   (a new sign-in; each code can be used once and expires quickly)`],
    });
  }
  return new AuthError(err.code, `The code exchange failed. ${err.message}`, { hints: [] });
}

/** Waits for a pasted redirect URL (state checked when present) or a bare code on stdin. */
async function readPasted(deps: Deps, state: string, signal: AbortSignal): Promise<AuthorizationResponse> {
  const { createInterface } = await import('node:readline');
  const rl = createInterface({ input: deps.stdin, terminal: false });
  return new Promise<AuthorizationResponse>((resolve, reject) => {
    let finished = false;
    const finish = () => {
      finished = true;
      rl.close(); // which pauses stdin
      // A paused pipe still keeps the process alive; nothing more will be read from it.
      (deps.stdin as { unref?: () => void }).unref?.();
    };
    signal.addEventListener('abort', finish, { once: true });
    rl.on('close', () => {
      if (!finished)
        deps.out.info(
          'Nothing more can be pasted (stdin is closed); waiting only for the browser redirect to reach this listener.',
        );
    });
    rl.on('line', (raw) => {
      const line = raw.trim();
      if (!line) return;
      try {
        const response = /^https?:\/\//i.test(line)
          ? parseAuthorizationResponse(new URL(line).searchParams, state, { stateRequired: false })
          : /^[\w.~-]+$/.test(line)
            ? { code: line }
            : undefined;
        if (!response) {
          deps.out.warn('That is neither the redirect address nor a code; paste it again.');
          return;
        }
        finish();
        resolve(response);
      } catch (err) {
        finish();
        reject(err);
      }
    });
  });
}
