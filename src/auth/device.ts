import type { Deps } from '../deps.js';
import { AuthError, RateLimitError, UsageError } from '../errors.js';
import { safeText } from '../output/safe-text.js';
import { clientSecretFor, finishSignIn, flags, resolveClientId, scopeString } from './login.js';
import type { StoredToken } from './session.js';
import { deviceAuthorization, deviceEndpoint, tokenRequest } from './token-endpoint.js';

const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';
/** RFC 8628 §3.5: the interval when the server names none, and what each `slow_down` adds. */
const DEFAULT_INTERVAL_S = 5;
const SLOW_DOWN_S = 5;
/**
 * The interval mkt keeps to whatever the server says: at least RFC 8628's 5 s (0.000001 would poll
 * hundreds of times a second), at most 60 s (1e309 or 3000000 s overflow Node's timer to 1 ms).
 */
const MIN_INTERVAL_S = 5;
const MAX_INTERVAL_S = 60;
const clampInterval = (s: number) => Math.min(MAX_INTERVAL_S, Math.max(MIN_INTERVAL_S, s));

export interface DeviceLoginInput {
  clientId?: string;
  scopes?: string[];
  timeoutSeconds?: number;
}

/** The site's device authorization endpoint, or undefined (then `mkt login` uses the loopback flow). */
export async function deviceSignInOffered(deps: Deps): Promise<string | undefined> {
  return deviceEndpoint({ api: deps.api, config: deps.config, hintFlags: deps.hintFlags });
}

/**
 * `mkt login --device` (RFC 8628): asks the server for a device code, shows the address and the
 * code to type on any other device, then polls the token endpoint at the interval the server names
 * (slower after each `slow_down`) until the person approves, denies, or the code expires.
 */
export async function loginWithDevice(
  deps: Deps,
  input: DeviceLoginInput,
  endpoint?: string,
): Promise<StoredToken> {
  const clientId = await resolveClientId(deps, input.clientId);
  const where = endpoint ?? (await deviceSignInOffered(deps));
  if (!where) {
    throw new UsageError(
      `${deps.siteUrl} does not offer device sign-in (its metadata names no device_authorization_endpoint).`,
      {
        code: 'device_flow_unsupported',
        hints: [`mkt login${flags(deps)} --no-browser   (paste the redirect address instead)`],
      },
    );
  }
  const { secret: clientSecret, stored: secretStored } = await clientSecretFor(deps, clientId);
  const scopes = scopeString(input.scopes);
  const answer = await deviceAuthorization(deps, where, {
    client_id: clientId,
    client_secret: clientSecret,
    scope: scopes,
  });
  const deviceCode = typeof answer.device_code === 'string' ? answer.device_code : '';
  const userCode = typeof answer.user_code === 'string' ? answer.user_code : '';
  // `verification_url`: the name some servers used before RFC 8628 settled on `_uri`.
  const named = answer.verification_uri ?? answer.verification_url;
  const verify = typeof named === 'string' ? named : '';
  if (!deviceCode || !userCode || !URL.canParse(verify)) {
    throw new AuthError(
      'bad_device_response',
      `${where} did not answer a device code, a user code and an address.`,
      {
        hints: [],
      },
    );
  }
  const complete =
    typeof answer.verification_uri_complete === 'string' && URL.canParse(answer.verification_uri_complete)
      ? answer.verification_uri_complete
      : undefined;
  // What the server sent reaches the terminal only as one plain line each.
  deps.out.info(
    `To sign in, open ${safeText(verify)} on any device and enter the code:\n\n  ${safeText(userCode)}\n`,
  );
  if (complete)
    deps.out.info(`Or open ${safeText(complete)} (the code is filled in). Waiting for your answer…`);
  else deps.out.info('Waiting for your answer…');

  const now = () => deps.clock.now();
  const expiresIn = Number(answer.expires_in);
  const limitS = Math.min(input.timeoutSeconds ?? 900, expiresIn > 0 ? expiresIn : 900);
  const deadline = now() + limitS * 1000;
  // NaN (none, or not a number) is the default; Infinity and anything past 60 s are 60 s.
  const asked = Number(answer.interval ?? DEFAULT_INTERVAL_S);
  let interval = clampInterval(Number.isNaN(asked) ? DEFAULT_INTERVAL_S : asked);
  for (;;) {
    await deps.clock.sleep(interval * 1000);
    try {
      const res = await tokenRequest(deps, {
        grant_type: DEVICE_GRANT_TYPE,
        device_code: deviceCode,
        client_id: clientId,
        client_secret: clientSecret,
      });
      return await finishSignIn(deps, res.data, { clientId, clientSecret, secretStored, scopes });
    } catch (err) {
      // A server that rate-limits its polls with 429 means the same as slow_down.
      if (err instanceof RateLimitError && now() < deadline) {
        interval = clampInterval(interval + SLOW_DOWN_S);
        continue;
      }
      if (!(err instanceof AuthError)) throw err;
      if (err.code === 'authorization_pending' && now() < deadline) continue;
      if (err.code === 'slow_down' && now() < deadline) {
        interval = clampInterval(interval + SLOW_DOWN_S);
        deps.out.info(`The server asked mkt to ask less often: every ${interval} s now.`);
        continue;
      }
      throw deviceError(deps, err, limitS);
    }
  }
}

/** The end of a device sign-in that did not sign in, in the person's words. */
function deviceError(deps: Deps, err: AuthError, limitS: number): AuthError {
  const again = [`mkt login${flags(deps)} --device`];
  if (err.code === 'access_denied')
    return new AuthError(
      'access_denied',
      'The sign-in was denied on the verification page; nothing was stored.',
      {
        hints: again,
      },
    );
  if (err.code === 'expired_token' || err.code === 'authorization_pending' || err.code === 'slow_down')
    return new AuthError(
      'expired_token',
      `Nobody entered the code in time (it lasted ${limitS} s); nothing was stored.`,
      { hints: again },
    );
  return new AuthError(err.code, `The device sign-in failed. ${err.message}`, { hints: again });
}
