import { appOfKey } from '../apps/resolve.js';
import type { Deps } from '../deps.js';
import { accounts } from '../credentials/accounts.js';
import { AuthError, UsageError } from '../errors.js';
import { readInput } from '../platform/input.js';
import { promptSecret } from '../platform/prompts.js';
import { makeRoomFor } from './accounts.js';
import { describeUser, fetchProfile, flags, type Profile, siteSource, warnAboutOverrides } from './login.js';
import { markSignedIn } from './profiles.js';
import { apiKeyKind, storedKey } from './session.js';

/** `mkt login --with-api-key`: a test_/live_ key from stdin or a masked prompt, checked with /whoami. */
export async function loginWithApiKey(deps: Deps): Promise<{ kind: 'test_key' | 'live_key'; user: Profile }> {
  const key = deps.stdin.isTTY
    ? await promptSecret(deps, 'API key', 'pipe it on stdin: mkt login --with-api-key < key.txt')
    : (await readInput(deps, '-', { maxBytes: 64 * 1024, what: 'The API key' })).trim();
  if (!key) {
    throw new UsageError('No API key on stdin.', {
      code: 'api_key_required',
      hints: ['mkt login --with-api-key < key.txt', 'printenv MY_KEY | mkt login --with-api-key'],
    });
  }
  const kind = apiKeyKind(key);
  if (!kind) {
    throw new UsageError('That is not a marketplace API key: keys begin with test_ or live_.', {
      code: 'invalid_api_key',
      hints: ['mkt keys create --mode test   (a new key for your app)'],
    });
  }
  const credential = { kind, secret: key, source: 'login' };
  let user: Profile;
  try {
    user = await fetchProfile(deps, credential);
  } catch (err) {
    if (err instanceof AuthError) {
      throw new AuthError(
        err.code,
        `${deps.siteUrl} (from ${siteSource(deps)}) refused this API key; nothing was stored.`,
        {
          hints: [
            `mkt keys create --mode test${flags(deps)}   (a new key, when signed in as the app's developer)`,
            'mkt login --with-api-key --site-url SITE_URL < key.txt   (if the key is for another marketplace)',
          ],
        },
      );
    }
    throw err;
  }
  // Stored with the key: later commands need no `GET /apps` to find its app.
  const app = await appOfKey(deps, credential);
  const who = { id: user.id, email: user.email, name: user.name };
  await makeRoomFor(deps, who);
  await deps.credentials.set(accounts.apiKey(deps.profile), storedKey(key, deps.siteUrl, who, app));
  await deps.credentials.delete(accounts.oauth(deps.profile));
  await markSignedIn(deps.credentials, deps.profile, true);
  if (deps.siteUrlSource === 'flag') await deps.config.set(deps.profile, 'site-url', deps.siteUrl);
  const label = kind === 'live_key' ? 'a LIVE key' : 'a test key';
  deps.out.success(`Logged in as ${describeUser(user)} on ${deps.siteUrl} with ${label}`);
  if (kind === 'live_key') deps.out.warn('This is a live key: calls act on real users and real payments.');
  warnAboutOverrides(deps);
  return { kind, user };
}
