import { resolveAppId } from '../apps/resolve.js';
import type { Deps } from '../deps.js';
import { MktError } from '../errors.js';

type PayDeps = Pick<Deps, 'api' | 'config' | 'profile' | 'session'>;

/** The app's payment account (`GET /apps/{id}/payouts`). */
export interface Payouts {
  app_id: string;
  linked: boolean;
  account_id: string | null;
  linked_at: string | null;
  [field: string]: unknown;
}

/** A charge (`GET /apps/{id}/payments`). */
export interface Charge {
  id: string;
  user_id: string;
  plan: string;
  amount: number;
  currency: string;
  outcome: string;
  kind: string;
  created_at: string;
}

const appPath = (appId: string, rest: string) => `/apps/${encodeURIComponent(appId)}/${rest}`;

/** Starts linking a payment account: the URL of the processor's connect page. */
export async function linkPayouts(
  deps: PayDeps,
  input: { app?: string },
): Promise<{ app_id: string; url: string }> {
  const appId = await resolveAppId(deps, input);
  const res = await deps.api.post<{ url?: unknown }>(appPath(appId, 'payouts/link'), {});
  const url = res.data?.url;
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) {
    throw new MktError('bad_response', `POST ${appPath(appId, 'payouts/link')} did not answer a page URL.`);
  }
  return { app_id: appId, url };
}

/** Whether the app can sell paid plans: its linked payment account. */
export async function payoutsStatus(deps: PayDeps, input: { app?: string }): Promise<Payouts> {
  const appId = await resolveAppId(deps, input);
  return (await deps.api.get<Payouts>(appPath(appId, 'payouts'))).data;
}

/** Every charge made for the app (initial, renewal, retry; succeeded or declined), optionally one user's. */
export async function listPayments(deps: PayDeps, input: { app?: string; user?: string }): Promise<Charge[]> {
  const appId = await resolveAppId(deps, input);
  return deps.api.list<Charge>(appPath(appId, 'payments'), { query: { user_id: input.user } });
}
