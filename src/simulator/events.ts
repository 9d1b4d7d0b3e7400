import type { Deps } from '../deps.js';
import { ApiError, AuthError, MktError, UsageError } from '../errors.js';
import { resolveAppId } from '../apps/resolve.js';

import { EVENT_NAMES, type EventName } from '../wire.js';

export { EVENT_NAMES, type EventName };

type FieldKind = 'string' | 'string[]' | 'timestamp';

/** The `data` fields of each event (docs/DECISIONS.md §2). */
const EVENT_FIELDS: Record<EventName, Record<string, FieldKind>> = {
  'user.authorized': { user_id: 'string', app_id: 'string', scopes: 'string[]' },
  'user.revoked': { user_id: 'string', app_id: 'string', scopes: 'string[]' },
  'subscription.created': { user_id: 'string', plan: 'string' },
  'subscription.cancelled': {
    user_id: 'string',
    plan: 'string',
    cancelled_at: 'timestamp',
    reason: 'string',
  },
};

/** Checks an event name, or a usage error listing the valid ones. */
export function checkEventName(event: string | undefined): EventName {
  if ((EVENT_NAMES as readonly (string | undefined)[]).includes(event)) return event as EventName;
  const problem = event === undefined ? 'Name the event to send.' : `Unknown event "${event}".`;
  throw new UsageError(`${problem} Events: ${EVENT_NAMES.join(', ')}.`, {
    code: event === undefined ? 'event_required' : 'unknown_event',
    hints: EVENT_NAMES.map((e) => `mkt trigger ${e}`).slice(0, 2),
  });
}

/** Refuses a live key before any request: the simulator never touches real users. */
export async function requireTestCredential(deps: Pick<Deps, 'session'>): Promise<void> {
  const credential = await deps.session.credential();
  if (credential?.kind === 'live_key') {
    throw new AuthError(
      'live_key_refused',
      'The simulator only runs in test mode, and this is a live_ key.',
      {
        hints: ['MKT_API_KEY=test_… mkt trigger …', 'mkt keys create --mode test'],
      },
    );
  }
}

/** Builds event data from --data-file JSON and --set data.key=value pairs, checked against the event's fields. */
export function buildEventData(
  event: EventName,
  input: { file?: unknown; sets?: string[]; user?: string; plan?: string },
): Record<string, unknown> {
  const fields = EVENT_FIELDS[event];
  const valid = Object.keys(fields).join(', ');
  const kindOf = (key: string): FieldKind => {
    // Own keys only: "__proto__" or "constructor" in a --data-file is an unknown field, not a prototype.
    if (Object.hasOwn(fields, key)) return fields[key]!;
    throw new UsageError(`${event} has no field "${key}". Its fields are: ${valid}.`, {
      code: 'unknown_field',
    });
  };
  const data: Record<string, unknown> = {};
  if (input.file !== undefined) {
    if (!input.file || typeof input.file !== 'object' || Array.isArray(input.file)) {
      throw new UsageError('--data-file must hold a JSON object (the event data).');
    }
    const raw = input.file as Record<string, unknown>;
    // Accept a whole envelope too: {event, timestamp, data}.
    const obj =
      raw.data && typeof raw.data === 'object' && 'event' in raw
        ? (raw.data as Record<string, unknown>)
        : raw;
    for (const [key, value] of Object.entries(obj)) {
      kindOf(key);
      data[key] = value;
    }
  }
  if (input.user) data.user_id = input.user;
  if (input.plan) {
    if (!('plan' in fields))
      throw new UsageError(`--plan does not apply to ${event}; its fields are: ${valid}.`);
    data.plan = input.plan;
  }
  for (const set of input.sets ?? []) {
    const m = /^(?:data\.)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(set);
    if (!m)
      throw new UsageError(`--set "${set}" is not data.key=value.`, {
        hints: [`--set data.user_id=usr_123`],
      });
    const [, key, value] = m as unknown as [string, string, string];
    const kind = kindOf(key);
    data[key] =
      kind === 'string[]'
        ? value
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : value;
  }
  for (const [key, value] of Object.entries(data)) {
    const kind = kindOf(key);
    const ok =
      kind === 'string[]'
        ? Array.isArray(value) && value.every((v) => typeof v === 'string')
        : typeof value === 'string' && (kind !== 'timestamp' || !Number.isNaN(Date.parse(value)));
    if (!ok) {
      throw new UsageError(
        `Field "${key}" of ${event} must be ${kind === 'string[]' ? 'a list of strings (a,b)' : kind === 'timestamp' ? 'an ISO 8601 timestamp' : 'a string'}.`,
        { code: 'invalid_field' },
      );
    }
  }
  return data;
}

/** An ISO 8601 time to the second, as the envelopes carry it. */
function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Fills what the user left out: the app, default scopes, the cancellation time (the server fills the user and plan). */
function withDefaults(
  event: EventName,
  data: Record<string, unknown>,
  appId: string,
  now: number,
): Record<string, unknown> {
  const out = { ...data };
  if (event === 'user.authorized' || event === 'user.revoked') {
    out.app_id ??= appId;
    out.scopes ??= ['identity:read'];
  }
  if (event === 'subscription.cancelled') out.cancelled_at ??= isoSeconds(now);
  return out;
}

/** What `POST /simulator/events` answers (`transition`: what the marketplace did, null when synthetic). */
export interface TriggerResult {
  transition?: unknown;
  delivery_id: string;
  event: string;
  envelope: Envelope;
  webhook: { url: string | null; status: string; response_status: number | null; error: string | null };
  listeners: number;
}

/** A webhook envelope (docs/PROTOCOL.md). */
interface Envelope {
  event: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** What `mkt trigger --dry-run` answers: the envelope that would be sent. */
export interface DryRun {
  dry_run: true;
  app_id: string;
  envelope: Envelope;
  /** Without --user, when the send names no user: a new test user subscribes, or the marketplace picks. */
  user_left_out?: 'new_test_user' | 'marketplace';
}

/**
 * Sends a simulated event through the marketplace (test credentials only) for --app or the default
 * app; with `dryRun`, sends nothing and answers the envelope it would send.
 */
export async function triggerEvent(
  deps: Pick<Deps, 'api' | 'config' | 'profile' | 'session' | 'clock'>,
  input: {
    app?: string;
    event: EventName;
    data: Record<string, unknown>;
    dryRun?: boolean;
    synthetic?: boolean;
  },
): Promise<TriggerResult | DryRun> {
  await requireTestCredential(deps);
  for (const key of ['cancelled_at', 'reason'])
    if (!input.synthetic && key in input.data)
      throw new UsageError(
        `data.${key} is set by the marketplace when it cancels: leave it out, or send the data as given with --synthetic.`,
        { code: 'enacted_field' },
      );
  const appId = await resolveAppId(deps, input);
  // An enacted event's times and scopes are the marketplace's; defaults are filled here only for
  // what is sent as given (synthetic) or only shown (dry run).
  const data =
    input.dryRun || input.synthetic
      ? withDefaults(input.event, input.data, appId, deps.clock.now())
      : { ...input.data };
  // The user is chosen here, by the published rule, so that the dry run shows whom the send names.
  const user =
    input.synthetic || data.user_id !== undefined ? undefined : await leftOutUser(deps, input.event, appId);
  if (typeof user === 'string') data.user_id = user;
  if (input.dryRun) {
    const full = input.synthetic ? data : await enactedData(deps, input.event, data, appId);
    const envelope = { event: input.event, timestamp: isoSeconds(deps.clock.now()), data: full };
    const leftOut =
      user === null
        ? 'new_test_user'
        : data.user_id === undefined && !input.synthetic
          ? 'marketplace'
          : undefined;
    return { dry_run: true, app_id: appId, envelope, ...(leftOut ? { user_left_out: leftOut } : {}) };
  }
  const body = { app_id: appId, event: input.event, data, ...(input.synthetic ? { synthetic: true } : {}) };
  try {
    return (await deps.api.post<TriggerResult>('/simulator/events', body)).data;
  } catch (err) {
    // A refusal names what to look at: the app's plans and test users, and what the send would carry.
    if (err instanceof ApiError && err.hints.length === 0)
      err.hints.push(
        `mkt trigger ${input.event} --app ${appId} --dry-run   (the event it would send, and to whom)`,
        `mkt plans list --app ${appId}`,
        `mkt simulator users list --app ${appId}`,
      );
    throw err;
  }
}

/**
 * The test user an enacted event without `user_id` goes to (docs/PROTOCOL.md, `POST /simulator/events`):
 * null for subscription.created (a new test user subscribes); the oldest test user whose recurring
 * subscription can be cancelled for subscription.cancelled; the oldest test user otherwise. Never the
 * developer: an app without such a user is refused here, naming how to make one. Undefined when the
 * marketplace does not list test users (it then picks, as published).
 */
async function leftOutUser(
  deps: Pick<Deps, 'api'>,
  event: EventName,
  appId: string,
): Promise<string | null | undefined> {
  if (event === 'subscription.created') return null;
  const app = encodeURIComponent(appId);
  let users: Array<{ id: string; plan?: string; status?: string }>;
  try {
    users = await deps.api.list('/simulator/users', { query: { app_id: appId } });
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 405)) return undefined;
    throw err;
  }
  const plans = await deps.api.list<{ id: string; kind?: string; archived?: boolean }>(`/apps/${app}/plans`);
  const plan = (plans.find((p) => !p.archived && p.kind !== 'free') ?? plans[0])?.id ?? 'PLAN';
  if (users.length === 0) {
    throw new MktError('no_test_users', `App ${appId} has no test users to send ${event} to.`, 1, {
      hints: [`mkt simulator users create --plan ${plan} --app ${appId}`],
    });
  }
  if (event !== 'subscription.cancelled') return users[0]!.id;
  const recurring = new Set(
    plans.filter((p) => p.kind === 'monthly' || p.kind === 'annual').map((p) => p.id),
  );
  const live = ['active', 'trialing', 'past_due'];
  const target = users.find((u) => live.includes(u.status ?? '') && recurring.has(u.plan ?? ''));
  if (target) return target.id;
  throw new MktError(
    'no_subscription',
    `No test user of app ${appId} has a monthly or annual subscription to cancel.`,
    1,
    { hints: [`mkt trigger subscription.created --plan ${plan} --app ${appId}`] },
  );
}

/**
 * For --dry-run: the data the marketplace's send would carry (docs/DECISIONS.md §5), in its order —
 * the plan the user is on, the business time and the reason of a cancellation, the scopes a
 * revocation takes away — read from the marketplace, never guessed. Only the new test user's id of a
 * subscription.created without --user is left out (the marketplace makes it when it sends).
 */
async function enactedData(
  deps: Pick<Deps, 'api'>,
  event: EventName,
  data: Record<string, unknown>,
  appId: string,
): Promise<Record<string, unknown>> {
  const userId = data.user_id as string | undefined;
  if (event === 'user.authorized') {
    const scopes = [...new Set((data.scopes as string[] | undefined) ?? ['identity:read'])];
    return { user_id: userId, app_id: appId, scopes };
  }
  if (event === 'subscription.created') {
    return { ...(userId ? { user_id: userId } : {}), plan: data.plan ?? (await firstPaidPlan(deps, appId)) };
  }
  // A marketplace that lists no test users picks the user itself (leftOutUser): nothing to read.
  const user = userId === undefined ? undefined : await testUser(deps, appId, userId);
  if (event === 'user.revoked')
    return { user_id: userId, app_id: appId, ...(user?.scopes ? { scopes: user.scopes } : {}) };
  if (user && !['active', 'trialing', 'past_due'].includes(user.status ?? '')) {
    throw new MktError(
      'no_subscription',
      `Test user ${userId} has no subscription to cancel (${user.status ?? 'none'}).`,
      1,
      {
        hints: [`mkt trigger subscription.created --user ${userId} --app ${appId}`],
      },
    );
  }
  if (user?.plan && data.plan !== undefined && data.plan !== user.plan) {
    throw new UsageError(
      `Test user ${userId} is on plan "${user.plan}", not "${String(data.plan)}"; leave --plan out.`,
      {
        code: 'wrong_plan',
      },
    );
  }
  const now = user ? (await deps.api.get<{ now: string }>('/simulator/clock')).data.now : undefined;
  return { user_id: userId, plan: user?.plan ?? data.plan, cancelled_at: now, reason: 'requested' };
}

/** A test user as the marketplace shows it (undefined from a marketplace that does not list them). */
async function testUser(
  deps: Pick<Deps, 'api'>,
  appId: string,
  userId: string,
): Promise<{ plan?: string; status?: string; scopes?: string[] } | undefined> {
  try {
    return (
      await deps.api.get<{ plan?: string; status?: string; scopes?: string[] }>(
        `/simulator/users/${encodeURIComponent(userId)}`,
        { query: { app_id: appId } },
      )
    ).data;
  } catch (err) {
    if (err instanceof ApiError && err.status === 405) return undefined;
    throw err;
  }
}

/** The plan a subscription.created without --plan subscribes to: the app's first live paid plan. */
async function firstPaidPlan(deps: Pick<Deps, 'api'>, appId: string): Promise<string> {
  const plans = await deps.api.list<{ id: string; kind?: string; archived?: boolean }>(
    `/apps/${encodeURIComponent(appId)}/plans`,
  );
  const live = plans.filter((p) => !p.archived);
  const pick = (live.find((p) => p.kind !== 'free') ?? live[0])?.id;
  if (!pick)
    throw new MktError('no_plans', `App ${appId} has no plans.`, 1, {
      hints: [`mkt plans create --app ${appId}`],
    });
  return pick;
}
