import type { Deps } from '../deps.js';
import { UsageError } from '../errors.js';

/** The app a command acts on: --app, else the profile's `app` setting; a clear usage error otherwise. */
export async function resolveAppId(
  deps: Pick<Deps, 'config' | 'profile'>,
  flag: string | undefined,
): Promise<string> {
  const app = flag ?? (await deps.config.get(deps.profile, 'app'));
  if (!app) {
    throw new UsageError('No app given: pass --app app_… or choose a default app for this profile.', {
      code: 'app_required',
      hints: ['mkt apps list', 'mkt apps use APP_ID'],
    });
  }
  if (!/^app_[A-Za-z0-9_-]+$/.test(app)) throw new UsageError(`"${app}" is not an app id (app_…).`);
  return app;
}
