import type { SandboxCore } from '../kernel/core.js';
import { invalidRequest, SandboxApiError } from '../kernel/http/problem.js';
import { issueTokens } from '../kernel/model.js';
import { APP_SCOPES, type AppRecord, type Scope } from '../kernel/storage/records.js';
import type { EmitResult } from '../kernel/deliveries/dispatcher.js';
import type { Life } from '../billing/life.js';
import type { Transition } from '../billing/records.js';

/** The fields each event's data may carry when it is enacted (the marketplace fills the rest). */
const ENACTED_FIELDS: Record<string, readonly string[]> = {
  'subscription.created': ['user_id', 'plan'],
  'subscription.cancelled': ['user_id', 'plan'],
  'user.authorized': ['user_id', 'app_id', 'scopes'],
  'user.revoked': ['user_id', 'app_id'],
};

/** What an enacted event did: the transition (or null for authorize and revoke) and its deliveries. */
export interface Enacted {
  transition: Transition | null;
  sent: Promise<EmitResult[]>;
}

const conflict = (code: string, message: string) => new SandboxApiError(409, code, message);

function userIdOf(data: Record<string, unknown>): string | undefined {
  const id = data.user_id;
  if (id === undefined) return undefined;
  if (typeof id !== 'string' || !/^usr_[A-Za-z0-9]+$/.test(id)) {
    throw invalidRequest('In "data": field "user_id" must look like usr_….');
  }
  return id;
}

/**
 * Performs the transition `event` names (docs/DECISIONS.md §5, the simulator enacts) and answers the
 * deliveries it made. Left-out users are chosen as a developer would expect: a new test user
 * subscribes; a cancellation takes the app's oldest test user with a cancellable subscription;
 * authorize and revoke take the app's oldest test user.
 */
export function enactEvent(
  core: SandboxCore,
  life: Life,
  app: AppRecord,
  event: string,
  data: Record<string, unknown>,
): Enacted {
  return core.ledger.atomic(() => enactNow(core, life, app, event, data));
}

function enactNow(
  core: SandboxCore,
  life: Life,
  app: AppRecord,
  event: string,
  data: Record<string, unknown>,
): Enacted {
  const allowed = ENACTED_FIELDS[event] ?? [];
  for (const key of Object.keys(data)) {
    if (key === 'cancelled_at' || key === 'reason') {
      throw invalidRequest(
        `In "data": "${key}" is set by the marketplace when it cancels; leave it out, or send the payload as given with --synthetic.`,
      );
    }
    if (!allowed.includes(key)) {
      throw invalidRequest(
        `In "data": unknown field "${key}" for ${event}; its fields are: ${allowed.join(', ')}.`,
      );
    }
  }
  if (data.app_id !== undefined && data.app_id !== app.id) {
    throw conflict(
      'wrong_app',
      `"app_id" is ${JSON.stringify(data.app_id)}, but the event is for app "${app.id}".`,
    );
  }
  const userId = userIdOf(data);
  const plan = data.plan;
  if (plan !== undefined && (typeof plan !== 'string' || !/^[a-z0-9][a-z0-9-]*$/.test(plan))) {
    throw invalidRequest('In "data": field "plan" must be a plan id.');
  }
  const oldest = () => {
    const id = core.ledger.userIds(app.id)[0];
    if (id === undefined) {
      throw conflict('no_test_users', `App "${app.id}" has no test users.`);
    }
    return id;
  };
  if (event === 'subscription.created') {
    const planId = (plan as string | undefined) ?? firstPaidPlan(life, core, app);
    if (userId === undefined) {
      // A free plan sends no event when a user subscribes; enacting the event asks for it.
      const { transition, sent } = life.createUser(app, { plan: planId, announce: true });
      return { transition, sent };
    }
    const { transitions, sent } = life.updateUser(app, userId, { plan: planId, announce: true });
    return { transition: transitions[0] ?? null, sent };
  }
  if (event === 'subscription.cancelled') {
    const target = userId ?? life.firstCancellable(app.id);
    if (target === undefined) {
      throw conflict('no_subscription', `No test user of app "${app.id}" has a subscription to cancel.`);
    }
    const sub = life.store.subscription(app.id, target);
    if (plan !== undefined && sub !== undefined && sub.plan !== plan) {
      throw conflict(
        'wrong_plan',
        `User "${target}" is on plan "${sub.plan}", not "${plan}"; leave "plan" out or name "${sub.plan}".`,
      );
    }
    const { transition, sent } = life.cancelUser(app, target);
    return { transition, sent };
  }
  if (event === 'user.authorized') {
    const target = userId ?? oldest();
    const raw = data.scopes ?? ['identity:read'];
    if (!Array.isArray(raw) || raw.length === 0 || raw.some((s) => !APP_SCOPES.includes(s as Scope))) {
      throw invalidRequest(`In "data": "scopes" must be a non-empty list of ${APP_SCOPES.join(', ')}.`);
    }
    const scopes = [...new Set(raw as Scope[])];
    const user = life.testUser(app, target);
    issueTokens(core, app, user.id, scopes);
    const sent = core.deliveries.emit(app, 'user.authorized', { user_id: user.id, app_id: app.id, scopes });
    return { transition: null, sent: sent.then((r) => [r]) };
  }
  const { sent } = life.revokeUser(app, userId ?? oldest());
  return { transition: null, sent: sent.then((r) => [r]) };
}

function firstPaidPlan(life: Life, core: SandboxCore, app: AppRecord): string {
  const ids = core.ledger.planIds(app.id);
  const live = ids.map((id) => life.store.plan(app.id, id)).filter((p) => p !== undefined && !p.archived);
  const pick = live.find((p) => p!.kind !== 'free') ?? live[0];
  if (!pick) throw new SandboxApiError(404, 'not_found', `App "${app.id}" has no plans.`);
  return pick.id;
}
