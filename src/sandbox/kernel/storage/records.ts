/** Subscription status values (docs/DECISIONS.md §2). */
export const STATUSES = ['active', 'trialing', 'past_due', 'cancelled', 'expired'] as const;
export type Status = (typeof STATUSES)[number];
/** Plan kinds (docs/DECISIONS.md §2). */
export const PLAN_KINDS = ['free', 'monthly', 'annual', 'one_time'] as const;
export type PlanKind = (typeof PLAN_KINDS)[number];
/** Token scopes (docs/PROTOCOL.md, Identity). */
export const SCOPES = ['identity:read', 'entitlements:read', 'apps:write'] as const;
export type Scope = (typeof SCOPES)[number];
/** The scopes a third-party app may ask for; the simulator never issues `apps:write` (docs/DECISIONS.md §2). */
export const APP_SCOPES: readonly Scope[] = ['identity:read', 'entitlements:read'];
/** How a test user's charges go (docs/DECISIONS.md §5). */
export type PaymentBehaviour = 'succeeds' | 'declines' | 'declines_renewals';
export const PAYMENT_BEHAVIOURS: readonly PaymentBehaviour[] = ['succeeds', 'declines', 'declines_renewals'];

/** A marketplace user: the developer (`app_id: null`) or a simulator test user of one app. */
export interface UserRecord {
  id: string;
  email: string;
  name: string;
  app_id: string | null;
  created_at: string;
}

/** An app as stored, secrets included. */
export interface AppRecord {
  id: string;
  owner_id: string;
  name: string;
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  webhook_url: string | null;
  embed_url: string | null;
  webhook_secret: string;
  created_at: string;
}

/** A pricing plan of one app. */
export interface PlanRecord {
  id: string;
  app_id: string;
  name: string;
  kind: PlanKind;
  price: { amount: number; currency: string } | null;
  features: string[];
  api_call_limit: number | null;
  /** Days of free trial a new subscriber gets (0: none); a folder from before trials has none. */
  trial_days?: number;
  archived: boolean;
  created_at: string;
}

/** An API key of one app; the secret is stored so the sandbox can show its seed again. */
export interface KeyRecord {
  id: string;
  app_id: string;
  mode: 'test' | 'live';
  key: string;
  created_at: string;
}

/** A user's subscription to one plan of one app. */
export interface SubscriptionRecord {
  user_id: string;
  app_id: string;
  plan: string;
  status: Status;
  expires_at: string | null;
  cancelled_at: string | null;
  api_calls: number;
  created_at: string;
}

/**
 * An access (`at_…`) or refresh (`rt_…`) token; `family` links every rotation of one grant. A used
 * refresh token stays as `spent`, so that its reuse is recognised (and kills the family) after a restart.
 */
export interface TokenRecord {
  token: string;
  kind: 'access' | 'refresh' | 'spent';
  app_id: string;
  user_id: string;
  scopes: Scope[];
  expires_at: number | null;
  family: string;
  /** A spent refresh token: when it was spent (ms), and the token response it was spent for. */
  spent_at?: number | null;
  successor?: string | null;
}

/** One signed delivery: the exact bytes and headers sent to the webhook URL and to relay listeners. */
export interface DeliveryRecord {
  seq: number;
  id: string;
  app_id: string;
  event: string;
  created_at: string;
  body: string;
  signature: string;
  /** A synthetic simulator event, sent as given (header `X-Marketplace-Simulated: synthetic`). */
  simulated?: 'synthetic';
}

/** A delivery still owed to the webhook URL: the next attempt's number and when it is due. */
export interface PendingDelivery {
  delivery: DeliveryRecord;
  url: string;
  attempt: number;
  due_at: number;
}

/** One webhook attempt: when, where, and the answer (a status) or why there was none. */
export interface AttemptRecord {
  delivery_id: string;
  attempt: number;
  at: number;
  url: string;
  response_status: number | null;
  error: string | null;
  /** How long the attempt took, and the start of the answer's body (docs/PROTOCOL.md, deliveries). */
  latency_ms?: number | null;
  response_excerpt?: string | null;
}

/** Which records the first start created; they make up the seed `startSandbox` reports. */
export interface SeedIds {
  developer_id: string;
  app_id: string;
  test_key_id: string;
  live_key_id: string;
  user_ids: string[];
}

/** One change to the state (the log of earlier versions holds these too); applying the same change twice leaves the same state. */
export type Change =
  | { op: 'seed'; v: SeedIds }
  | { op: 'user'; v: UserRecord }
  | { op: 'app'; v: AppRecord }
  | { op: 'app-'; id: string }
  | { op: 'plan'; v: PlanRecord }
  | { op: 'plan-'; app_id: string; id: string }
  | { op: 'key'; v: KeyRecord }
  | { op: 'key-'; id: string }
  | { op: 'sub'; v: SubscriptionRecord }
  | { op: 'token'; v: TokenRecord }
  | { op: 'token-'; token: string }
  | { op: 'delivery'; v: DeliveryRecord }
  | { op: 'pending'; v: PendingDelivery }
  | { op: 'pending-'; id: string }
  | { op: 'attempt'; v: AttemptRecord };
