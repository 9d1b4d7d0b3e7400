import type { Deps } from '../deps.js';
import { UsageError } from '../errors.js';
import { resolveAppId } from '../apps/resolve.js';
import { confirmAction } from '../platform/prompts.js';

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

/** Every key of the app, without secrets; `app` is --app (the default app when left out). */
export async function listKeys(deps: KeyDeps, input: { app?: string }): Promise<ApiKey[]> {
  const keys = await deps.api.list<ApiKey>(keysPath(await resolveAppId(deps, input)));
  return keys.map(withoutSecret);
}

/** Creates a key; the answer carries the whole secret (`key`) this once. */
export async function createKey(
  deps: KeyDeps,
  input: { app?: string; mode: 'test' | 'live' },
): Promise<ApiKey & { key: string }> {
  const app = await resolveAppId(deps, input);
  return (await deps.api.post<ApiKey & { key: string }>(keysPath(app), { mode: input.mode })).data;
}

/** Checks a key id: the id shown by `mkt keys list`, never the secret itself. */
function checkKeyId(id: string): string {
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

/** Revokes (deletes) a key once confirmed; requests made with it fail from now on. */
export async function revokeKey(
  deps: KeyDeps & Pick<Deps, 'out' | 'stdin'>,
  input: { app?: string; id: string; yes?: boolean },
): Promise<{ id: string; revoked: true }> {
  const app = await resolveAppId(deps, input);
  const id = checkKeyId(input.id);
  await confirmAction(deps, `Revoke API key ${id} of ${app} (anything using it stops working)?`, {
    yes: input.yes,
  });
  await deps.api.delete(`${keysPath(app)}/${encodeURIComponent(id)}`);
  return { id, revoked: true };
}
