import type { AppRecord, KeyRecord, Scope, UserRecord } from './storage/records.js';

/** Who is calling: a user's token (with its grant's family) or an app's API key. */
export type Principal =
  | { kind: 'token'; user: UserRecord; app: AppRecord; scopes: Scope[]; family: string }
  | { kind: 'key'; key: KeyRecord; app: AppRecord };
