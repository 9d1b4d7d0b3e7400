// Event data as the sandbox's model makes it (docs/PROTOCOL.md, Webhook deliveries; docs/DECISIONS.md §5):
// ids shaped as its ids, its seeded plan, the scopes its grants carry.
import { randomBytes } from 'node:crypto';
import type { EventName } from '../../wire.js';

/** An id as the sandbox writes them: the prefix, `_` and random hex (`usr_3f9a…`, `dlv_…`). */
export const newId = (prefix: string, bytes: number): string =>
  `${prefix}_${randomBytes(bytes).toString('hex')}`;

/** A test user id (`usr_` and 16 hex digits). */
export const newUserId = (): string => newId('usr', 8);

/** A delivery id (`dlv_` and 24 hex digits), new for every delivery but a duplicate. */
export const newDeliveryId = (): string => newId('dlv', 12);

/** The seeded app's paid plan. */
export const PLAN = 'pro-monthly';

/** The scopes a test user's grant carries. */
export const USER_SCOPES = ['identity:read', 'entitlements:read'];

/** The data of `event` for `userId` of `appId` at `now` (ms), with the fields the sandbox sends. */
export function eventData(
  event: EventName,
  input: { appId: string; userId: string; now: number },
): Record<string, unknown> {
  switch (event) {
    case 'user.authorized':
    case 'user.revoked':
      return { user_id: input.userId, app_id: input.appId, scopes: [...USER_SCOPES] };
    case 'subscription.created':
      return { user_id: input.userId, plan: PLAN };
    case 'subscription.cancelled':
      return {
        user_id: input.userId,
        plan: PLAN,
        cancelled_at: new Date(input.now).toISOString(),
        reason: 'requested',
      };
  }
}

/**
 * `user.authorized` data whose envelope is exactly `bytes` long: the bulk is a long `scopes` list
 * (known fields only, so that a handler that refuses unknown fields is caught by its own case, not
 * this one). `envelopeLength` measures a candidate.
 */
export function dataOfLength(
  base: Record<string, unknown>,
  bytes: number,
  envelopeLength: (data: Record<string, unknown>) => number,
): Record<string, unknown> {
  // Each further scope costs its quoted name and a comma: 16 ("identity:read"), 20
  // ("entitlements:read") or 13 ("apps:write"); 4a - 3b reaches every remainder.
  const scopes: string[] = [...USER_SCOPES];
  const remaining = bytes - envelopeLength({ ...base, scopes });
  if (remaining < 0) throw new Error(`an envelope of ${bytes} bytes cannot hold this event`);
  let count = Math.floor(remaining / 16);
  let rest = remaining - count * 16;
  // Trade identity:read (16) for entitlements:read (+4) and apps:write (-3) until the rest is 0.
  let wider = 0;
  let narrower = 0;
  while (rest !== 0) {
    if (rest > 0) {
      wider++;
      rest -= 4;
    } else {
      narrower++;
      rest += 3;
    }
  }
  count -= wider + narrower;
  for (let i = 0; i < count; i++) scopes.push('identity:read');
  for (let i = 0; i < wider; i++) scopes.push('entitlements:read');
  for (let i = 0; i < narrower; i++) scopes.push('apps:write');
  const data = { ...base, scopes };
  if (envelopeLength(data) !== bytes) throw new Error('dataOfLength: the envelope came out another size');
  return data;
}
