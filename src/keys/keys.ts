import type { Deps } from '../deps.js';
import { UsageError } from '../errors.js';
import { resolveAppId } from '../apps/resolve.js';

/** An API key as listed: never the whole secret. */
export interface ApiKey {
  id: string;
  mode: 'test' | 'live' | string;
  last4: string;
  created_at: string;
  [field: string]: unknown;
}

type KeyDeps = Pick<Deps, 'api' | 'config' | 'profile' | 'session'>;

const keysPath = (app: string) => `/apps/${encodeURIComponent(app)}/keys`;

/** Drops a whole secret a server might include in a listing, keeping its last four characters. */
function withoutSecret(key: ApiKey): ApiKey {
  const { key: secret, secret: other, ...rest } = key as ApiKey & { key?: unknown; secret?: unknown };
  const whole = typeof secret === 'string' ? secret : typeof other === 'string' ? other : undefined;
  return whole && !rest.last4 ? { ...rest, last4: whole.slice(-4) } : rest;
}

/** Every key of the app, without secrets. */
export async function listKeys(deps: KeyDeps, appFlag: string | undefined): Promise<ApiKey[]> {
  const keys = await deps.api.list<ApiKey>(keysPath(await resolveAppId(deps, appFlag)));
  return keys.map(withoutSecret);
}

/** Checks `--mode`. */
export function checkMode(mode: string): 'test' | 'live' {
  if (mode !== 'test' && mode !== 'live') {
    throw new UsageError(`Unknown key mode "${mode}"; use test or live.`, { code: 'invalid_mode' });
  }
  return mode;
}

/** Creates a key; the answer carries the whole secret (`key`) this once. */
export async function createKey(
  deps: KeyDeps,
  appFlag: string | undefined,
  mode: 'test' | 'live',
): Promise<ApiKey & { key: string }> {
  const app = await resolveAppId(deps, appFlag);
  return (await deps.api.post<ApiKey & { key: string }>(keysPath(app), { mode })).data;
}

/** Checks a key id: the id shown by `mkt keys list`, never the secret itself. */
export function checkKeyId(id: string): string {
  if (/^(test|live)_/.test(id)) {
    throw new UsageError('That looks like the key itself; pass its id (key_…) as shown by `mkt keys list`.', {
      code: 'invalid_key_id',
      hints: ['mkt keys list'],
    });
  }
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(id)) {
    throw new UsageError(`"${id}" is not a key id (key_…).`, {
      code: 'invalid_key_id',
      hints: ['mkt keys list'],
    });
  }
  return id;
}

/** Revokes (deletes) a key; requests made with it fail from now on. */
export async function revokeKey(deps: Pick<Deps, 'api'>, app: string, id: string): Promise<void> {
  await deps.api.delete(`${keysPath(app)}/${encodeURIComponent(id)}`);
}
