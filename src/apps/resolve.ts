import type { Deps } from '../deps.js';
import type { Credential } from '../api/client.js';
import { APP_ID } from '../wire.js';
import { ApiError, MktError, UsageError } from '../errors.js';
import { findProject } from '../init/project.js';

/**
 * The app a command acts on (docs/CLI.md, Which app): --app, else the app of the API key in use (a
 * key acts for its own app only, so `GET /apps` lists just that one: docs/DECISIONS.md §2), else the
 * app of the project the command runs in (its mkt.json, written by `mkt init`), else the profile's
 * `app` setting; a clear usage error otherwise.
 */
export async function resolveAppId(
  deps: Pick<Deps, 'config' | 'profile' | 'session' | 'api'> & Partial<Pick<Deps, 'cwd'>>,
  input: { app?: string },
): Promise<string> {
  const app =
    input.app ?? (await keyApp(deps)) ?? projectApp(deps) ?? (await deps.config.get(deps.profile, 'app'));
  if (app === undefined) {
    throw new UsageError('No app given: pass --app app_… or choose a default app for this profile.', {
      code: 'app_required',
      hints,
    });
  }
  if (!APP_ID.test(app)) throw new UsageError(`"${app}" is not an app id (app_…).`);
  return app;
}

const hints = ['mkt apps list', 'mkt apps use APP_ID'];

/** The app of the project (mkt.json) the command runs in, if any. */
export function projectApp(deps: Partial<Pick<Deps, 'cwd'>>): string | undefined {
  return deps.cwd === undefined ? undefined : findProject(deps.cwd)?.file.app_id;
}

/**
 * The app of the API key in use; undefined when the credential is not a key. A stored key knows its
 * app from sign-in; else `GET /apps` tells.
 */
async function keyApp(deps: Pick<Deps, 'session' | 'api'>): Promise<string | undefined> {
  const credential = await deps.session.credential();
  if (credential?.kind !== 'test_key' && credential?.kind !== 'live_key') return undefined;
  if (credential.app) return credential.app;
  const listed = await listKeyApp(deps, credential);
  if (typeof listed === 'string') return listed;
  throw new UsageError(
    `No app given, and GET /apps does not tell which app this API key belongs to (${listed.seen}): pass --app app_….`,
    { code: 'app_required', hints },
  );
}

/** The one app `GET /apps` lists for an API key, or what it said instead. */
async function listKeyApp(
  deps: Pick<Deps, 'api'>,
  credential: Credential,
): Promise<string | { seen: string }> {
  try {
    const apps = await deps.api.list<{ id?: unknown }>('/apps', { credential });
    const id = apps[0]?.id;
    if (apps.length === 1 && typeof id === 'string') return id;
    return { seen: `it lists ${apps.length} apps` };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { seen: `it answered ${err.status}` };
  }
}

/** The app of an API key being signed in with (stored with it), or undefined when GET /apps does not tell. */
export async function appOfKey(deps: Pick<Deps, 'api'>, credential: Credential): Promise<string | undefined> {
  const listed = await listKeyApp(deps, credential).catch(() => undefined);
  return typeof listed === 'string' && APP_ID.test(listed) ? listed : undefined;
}

/**
 * The app for a command that also works without one (the local journal of `webhooks listen`,
 * `deliveries`, `resend`): the same order as resolveAppId, and undefined when none is set. A key's
 * app that cannot be looked up (the site is down) falls back to the profile's app.
 */
export async function optionalAppId(
  deps: Pick<Deps, 'config' | 'profile' | 'session' | 'api'> & Partial<Pick<Deps, 'cwd'>>,
  input: { app?: string },
): Promise<string | undefined> {
  if (input.app !== undefined) return input.app;
  const ofKey = await keyApp(deps).catch((err: unknown) => {
    if (err instanceof MktError) return undefined;
    throw err;
  });
  return ofKey ?? projectApp(deps) ?? (await deps.config.get(deps.profile, 'app'));
}
