import { join } from 'node:path';
import type { Deps } from '../deps.js';
import { accounts, siteKey } from '../credentials/accounts.js';
import type { CredentialStore } from '../credentials/store.js';
import { safeText } from '../output/safe-text.js';
import { withFileLock } from '../platform/lock-file.js';
import { markSignedIn, signedInProfiles } from './profiles.js';
import { apiKeyKind } from './session.js';

/** Who an account is, as far as the store knows without asking the server. */
export interface AccountUser {
  id: string;
  email?: string;
  name?: string;
}

/** One stored sign-in of a profile: the active one (used by every command) or one kept for `auth switch`. */
export interface Account {
  profile: string;
  site_url: string;
  /** The account's key among the profile's accounts of its site: the user id, else `key-…last4`. */
  id: string;
  user: AccountUser | null;
  kind: 'token' | 'test_key' | 'live_key';
  active: boolean;
  client_id: string | null;
}

/** What the store holds for one account: the active slot's name and its raw value. */
interface Held {
  slot: 'oauth' | 'api-key';
  raw: string;
}

/** The index entry of a kept (inactive) account: no secret, only what `auth list` shows. */
type Kept = Omit<Account, 'profile' | 'active'>;

/** Reads an active slot's value into an account (null when it is not one mkt wrote). */
function describe(profile: string, held: Held, fallbackSite: string): Account | null {
  try {
    const v = JSON.parse(held.raw) as Record<string, unknown>;
    if (held.slot === 'oauth') {
      if (typeof v.access_token !== 'string') return null;
      const user = (v.user as AccountUser | undefined) ?? null;
      const site = typeof v.site_url === 'string' ? v.site_url : fallbackSite;
      return account(
        profile,
        site,
        user,
        'token',
        typeof v.client_id === 'string' ? v.client_id : null,
        v.access_token,
      );
    }
    if (typeof v.key !== 'string') return null;
    const site = typeof v.site_url === 'string' ? v.site_url : fallbackSite;
    return account(
      profile,
      site,
      (v.user as AccountUser | undefined) ?? null,
      apiKeyKind(v.key) ?? 'test_key',
      null,
      v.key,
    );
  } catch {
    // An API key stored before keys were bound to a site: the bare key.
    if (held.slot !== 'api-key' || !apiKeyKind(held.raw)) return null;
    return account(profile, fallbackSite, null, apiKeyKind(held.raw)!, null, held.raw);
  }
}

function account(
  profile: string,
  site: string,
  user: AccountUser | null,
  kind: Account['kind'],
  clientId: string | null,
  secret: string,
): Account {
  const id = user?.id ?? `${kind === 'token' ? 'token' : 'key'}-${secret.slice(-4)}`;
  return { profile, site_url: siteKey(site), id, user, kind, active: true, client_id: clientId };
}

/** The profile's active sign-in: its API key, else its OAuth token (as the session reads them). */
async function activeHeld(store: CredentialStore, profile: string): Promise<Held | null> {
  const key = await store.get(accounts.apiKey(profile));
  if (key) return { slot: 'api-key', raw: key };
  const token = await store.get(accounts.oauth(profile));
  return token ? { slot: 'oauth', raw: token } : null;
}

async function keptIndex(store: CredentialStore, profile: string): Promise<Kept[]> {
  try {
    const list: unknown = JSON.parse((await store.get(accounts.accountIndex(profile))) ?? '[]');
    return Array.isArray(list) ? (list as Kept[]).filter((k) => typeof k?.id === 'string') : [];
  } catch {
    return [];
  }
}

async function saveIndex(store: CredentialStore, profile: string, list: Kept[]): Promise<void> {
  if (list.length) await store.set(accounts.accountIndex(profile), JSON.stringify(list));
  else await store.delete(accounts.accountIndex(profile));
}

/** Every sign-in of `profile`, the active one first. */
export async function profileAccounts(
  deps: Pick<Deps, 'credentials' | 'siteUrl'>,
  profile: string,
): Promise<Account[]> {
  const held = await activeHeld(deps.credentials, profile);
  const active = held ? describe(profile, held, deps.siteUrl) : null;
  const kept = (await keptIndex(deps.credentials, profile)).map((k) => ({ ...k, profile, active: false }));
  return active ? [active, ...kept] : kept;
}

/** Every stored sign-in of every profile (as far as the indexes and config know them). */
export async function allAccounts(
  deps: Pick<Deps, 'credentials' | 'siteUrl' | 'config' | 'profile'>,
): Promise<Account[]> {
  const profiles = new Set([
    deps.profile,
    ...(await signedInProfiles(deps.credentials)),
    ...(await deps.config.profileNames()),
  ]);
  const all: Account[] = [];
  for (const profile of [...profiles].sort()) all.push(...(await profileAccounts(deps, profile)));
  return all;
}

/** Runs `fn` under the profile's refresh lock, so no refresh writes the active slot while it moves. */
function underLock<T>(
  deps: Pick<Deps, 'configDir' | 'clock'>,
  profile: string,
  fn: () => Promise<T>,
): Promise<T> {
  return withFileLock(join(deps.configDir, 'locks', `${profile}.refresh.lock`), deps.clock, fn, {
    waitMs: 60_000,
  });
}

/** Moves the active sign-in among the kept ones (its secret to a slot of its own); answers it. */
async function park(store: CredentialStore, profile: string, siteUrl: string): Promise<Account | null> {
  const held = await activeHeld(store, profile);
  const active = held ? describe(profile, held, siteUrl) : null;
  if (!held || !active) return null;
  await store.set(accounts.parked(profile, active.site_url, active.id), JSON.stringify(held));
  const { profile: _p, active: _a, ...kept } = active;
  const list = (await keptIndex(store, profile)).filter(
    (k) => !(k.site_url === active.site_url && k.id === active.id),
  );
  await saveIndex(store, profile, [...list, kept]);
  await store.delete(accounts.apiKey(profile));
  await store.delete(accounts.oauth(profile));
  return active;
}

/** Makes a kept account the active one again. */
async function unpark(store: CredentialStore, profile: string, target: Kept): Promise<void> {
  const name = accounts.parked(profile, target.site_url, target.id);
  const raw = await store.get(name);
  const held = raw ? (JSON.parse(raw) as Held) : null;
  if (held)
    await store.set(held.slot === 'oauth' ? accounts.oauth(profile) : accounts.apiKey(profile), held.raw);
  await store.delete(name);
  await saveIndex(
    store,
    profile,
    (await keptIndex(store, profile)).filter((k) => !(k.site_url === target.site_url && k.id === target.id)),
  );
}

/**
 * Before a new sign-in is stored: the active account of another user (or another site) is kept for
 * `auth switch`; the same user on the same site is simply replaced. A kept copy of the newcomer goes.
 */
export async function makeRoomFor(
  deps: Pick<Deps, 'credentials' | 'siteUrl' | 'profile' | 'configDir' | 'clock'>,
  user: AccountUser,
): Promise<void> {
  const { credentials: store, profile } = deps;
  /** Another account to park, and this user's kept copy to forget, as the store holds them now. */
  const moves = async () => {
    const held = await activeHeld(store, profile);
    const active = held ? describe(profile, held, deps.siteUrl) : null;
    const other = active && !(active.site_url === siteKey(deps.siteUrl) && active.id === user.id);
    const stale = (await keptIndex(store, profile)).find(
      (k) => k.site_url === siteKey(deps.siteUrl) && k.id === user.id,
    );
    return { other, stale };
  };
  // The same user signing in again moves nothing: no lock to take (as if it came before any other).
  const first = await moves();
  if (!first.other && !first.stale) return;
  await underLock(deps, profile, async () => {
    const { other, stale } = await moves();
    if (other) await park(store, profile, deps.siteUrl);
    if (stale) await forgetKept(store, profile, stale);
  });
}

async function forgetKept(store: CredentialStore, profile: string, kept: Kept): Promise<void> {
  await store.delete(accounts.parked(profile, kept.site_url, kept.id));
  await saveIndex(
    store,
    profile,
    (await keptIndex(store, profile)).filter((k) => !(k.site_url === kept.site_url && k.id === kept.id)),
  );
}

/** Makes `target` (one of the profile's kept accounts of the site in use) the active one; answers it. */
export async function switchTo(
  deps: Pick<Deps, 'credentials' | 'siteUrl' | 'profile' | 'configDir' | 'clock'>,
  target: Account,
): Promise<Account> {
  await underLock(deps, deps.profile, async () => {
    await park(deps.credentials, deps.profile, deps.siteUrl);
    await unpark(deps.credentials, deps.profile, target);
  });
  return { ...target, active: true };
}

/**
 * Forgets one account of the profile (the active one by default). When the active one goes and
 * another account of the same site is kept, that one becomes active (as `gh auth logout` does).
 */
export async function forget(
  deps: Pick<Deps, 'credentials' | 'siteUrl' | 'profile' | 'configDir' | 'clock'>,
  target: Account,
): Promise<{ forgotten: Account; nowActive: Account | null }> {
  const { credentials: store, profile } = deps;
  return underLock(deps, profile, async () => {
    if (!target.active) {
      await forgetKept(store, profile, target);
      return { forgotten: target, nowActive: null };
    }
    await store.delete(accounts.oauth(profile));
    await store.delete(accounts.apiKey(profile));
    const next = (await keptIndex(store, profile)).find((k) => k.site_url === target.site_url);
    if (next) await unpark(store, profile, next);
    else if (!(await keptIndex(store, profile)).length) await markSignedIn(store, profile, false);
    return { forgotten: target, nowActive: next ? { ...next, profile, active: true } : null };
  });
}

/** Forgets every account of the profile; answers them. */
export async function forgetAll(
  deps: Pick<Deps, 'credentials' | 'siteUrl'>,
  profile: string,
): Promise<Account[]> {
  const list = await profileAccounts(deps, profile);
  const store = deps.credentials;
  for (const k of list.filter((a) => !a.active))
    await store.delete(accounts.parked(profile, k.site_url, k.id));
  await store.delete(accounts.accountIndex(profile));
  await store.delete(accounts.oauth(profile));
  await store.delete(accounts.apiKey(profile));
  await markSignedIn(store, profile, false);
  return list;
}

/** The account a `--user` value names among `list`: its user id, e-mail or name (case-insensitive). */
export function findAccount(list: Account[], user: string): Account | undefined {
  const u = user.toLowerCase();
  return (
    list.find((a) => a.id.toLowerCase() === u) ??
    list.find((a) => a.user?.email?.toLowerCase() === u) ??
    list.find((a) => a.user?.name?.toLowerCase() === u)
  );
}

/**
 * "Name <email> (usr_…)", or the kind and key id for a key stored without its user; what the server
 * said made safe for a terminal (safeText: colour and conceal codes in a name are shown, not obeyed).
 */
export function accountLabel(a: Account): string {
  if (!a.user) return a.kind === 'token' ? `a token (${safeText(a.id)})` : `an API key (${safeText(a.id)})`;
  const who = a.user.name ?? a.user.email ?? a.user.id;
  const email = a.user.email && a.user.email !== who ? ` <${safeText(a.user.email)}>` : '';
  return `${safeText(who)}${email} (${safeText(a.user.id)})`;
}
