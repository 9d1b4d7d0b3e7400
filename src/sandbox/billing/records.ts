/**
 * The records of the marketplace's life (docs/DECISIONS.md §5): subscriptions over business time,
 * charges and the payment account. The billing modules read and write them only through
 * {@link BillingStore}, so they sit on whatever storage the sandbox has.
 */

export type SubStatus = 'trialing' | 'active' | 'past_due' | 'cancelled' | 'expired';
export type Kind = 'free' | 'monthly' | 'annual' | 'one_time';
import type { PaymentBehaviour } from '../kernel/storage/records.js';
export { PAYMENT_BEHAVIOURS, type PaymentBehaviour } from '../kernel/storage/records.js';

/** The part of a plan billing needs. */
export interface BillingPlan {
  id: string;
  app_id: string;
  kind: Kind;
  price: { amount: number; currency: string } | null;
  features: string[];
  api_call_limit: number | null;
  archived: boolean;
  trial_days?: number;
}

/** What is due next for a subscription, at `next_at` (business time, ms). */
export type DueKind = 'renew' | 'retry' | 'expire';

/** One subscription per user and app. Times are business time. */
export interface Subscription {
  user_id: string;
  app_id: string;
  plan: string;
  status: SubStatus;
  /** Start of the first paid period of this plan; periods end at calendar months/years from it. */
  anchor_at: number | null;
  /** How many periods since the anchor the current one ends at (0 during a trial). */
  periods: number;
  /** End of the current paid or trial period (ms), null for free and one-time. */
  period_end: number | null;
  /** When access ends (period end, or the end of the grace period while past due). */
  expires_at: number | null;
  cancelled_at: number | null;
  /** Failed charges since the period ended. */
  failures: number;
  /** Charges ever made for this user on this app (declines_renewals lets only the first succeed). */
  charges: number;
  api_calls: number;
  next_kind: DueKind | null;
  next_at: number | null;
  created_at: number;
  /** Creation order among subscriptions (the row's id), when the store knows it: it orders ties of `next_at`. */
  order?: number;
}

export type ChargeKind = 'initial' | 'renewal' | 'retry';

/** A charge, as `GET /apps/{id}/payments` lists it. */
export interface Payment {
  id: string;
  app_id: string;
  user_id: string;
  plan: string;
  amount: number;
  currency: string;
  outcome: 'succeeded' | 'declined';
  kind: ChargeKind;
  created_at: string;
}

/** What billing reads and writes; every method is synchronous (one transaction per request). */
export interface BillingStore {
  plan(appId: string, planId: string): BillingPlan | undefined;
  subscription(appId: string, userId: string): Subscription | undefined;
  putSubscription(sub: Subscription): void;
  /**
   * Up to `limit` subscriptions due by `until`, earliest `next_at` first (ties in creation order):
   * the store's own objects, never to be changed in place.
   */
  dueBatch(until: number, limit: number): Subscription[];
  paymentBehaviour(appId: string, userId: string): PaymentBehaviour;
  addPayment(payment: Payment): void;
  /** The app's linked payment account (`acct_…`), or null. */
  payoutsAccount(appId: string): string | null;
}

/** The published events a transition sends (only these four exist). */
export type LifeEvent =
  | { event: 'subscription.created'; data: { user_id: string; plan: string } }
  | {
      event: 'subscription.cancelled';
      data: { user_id: string; plan: string; cancelled_at: string; reason: CancelReason };
    };
export type CancelReason = 'requested' | 'payment_failed' | 'plan_changed';

export type TransitionName =
  | 'subscribed'
  | 'trial_started'
  | 'renewed'
  | 'renewal_declined'
  | 'retry_declined'
  | 'recovered'
  | 'expired'
  | 'cancelled'
  | 'plan_changed'
  | 'status_forced';

/** One thing that happened to one subscription, with the charge it made and the events it sends. */
export interface Transition {
  at: string;
  app_id: string;
  user_id: string;
  plan: string;
  transition: TransitionName;
  from: SubStatus | null;
  to: SubStatus;
  payment?: { id: string; kind: ChargeKind; outcome: Payment['outcome']; amount: number; currency: string };
  events: LifeEvent[];
}

/** A refusal the API answers with this status and code. */
export class BillingRefusal extends Error {
  constructor(
    readonly status: 402 | 404 | 409 | 400,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
