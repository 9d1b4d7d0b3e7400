import type { Deps } from '../deps.js';
import { ApiError, UsageError } from '../errors.js';

/**
 * The app a command acts on: --app, else the profile's `app` setting, else the app of the API key
 * in use (a key acts for its own app only, so `GET /apps` lists just that one: docs/DECISIONS.md §2);
 * a clear usage error otherwise.
 */
export async function resolveAppId(
  deps: Pick<Deps, 'config' | 'profile' | 'session' | 'api'>,
  input: { app?: string },
): Promise<string> {
  const app = input.app ?? (await deps.config.get(deps.profile, 'app')) ?? (await keyApp(deps));
  if (!/^app_[A-Za-z0-9_-]+$/.test(app)) throw new UsageError(`"${app}" is not an app id (app_…).`);
  return app;
}

const hints = ['mkt apps list', 'mkt apps use APP_ID'];

async function keyApp(deps: Pick<Deps, 'session' | 'api'>): Promise<string> {
  const credential = await deps.session.credential();
  if (credential?.kind !== 'test_key' && credential?.kind !== 'live_key') {
    throw new UsageError('No app given: pass --app app_… or choose a default app for this profile.', {
      code: 'app_required',
      hints,
    });
  }
  let seen: string;
  try {
    const apps = await deps.api.list<{ id?: unknown }>('/apps');
    if (apps.length === 1 && typeof apps[0]?.id === 'string') return apps[0].id;
    seen = `it lists ${apps.length} apps`;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    seen = `it answered ${err.status}`;
  }
  throw new UsageError(
    `No app given, and GET /apps does not tell which app this API key belongs to (${seen}): pass --app app_… or choose a default app for this profile.`,
    { code: 'app_required', hints },
  );
}
