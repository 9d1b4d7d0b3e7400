import { isoStamp, randomId } from '../kernel/ids.js';
import type { BillingPlan, BillingStore, ChargeKind, Payment, Transition } from './records.js';

/**
 * Charges `plan`'s price to a test user, as their payment behaviour says: `succeeds`, `declines`
 * (every charge) or `declines_renewals` (only the first charge ever made succeeds). Every charge is
 * recorded, declined ones too (docs/DECISIONS.md §5, Money).
 */
export function charge(
  store: BillingStore,
  input: { app_id: string; user_id: string; plan: BillingPlan; kind: ChargeKind; prior: number; at: number },
): Payment {
  const behaviour = store.paymentBehaviour(input.app_id, input.user_id);
  const ok = behaviour === 'succeeds' || (behaviour === 'declines_renewals' && input.prior === 0);
  const payment: Payment = {
    id: randomId('pay', 8),
    app_id: input.app_id,
    user_id: input.user_id,
    plan: input.plan.id,
    amount: input.plan.price?.amount ?? 0,
    currency: input.plan.price?.currency ?? 'USD',
    outcome: ok ? 'succeeded' : 'declined',
    kind: input.kind,
    created_at: isoStamp(input.at),
  };
  store.addPayment(payment);
  return payment;
}

/** The short form of a payment a transition carries. */
export function paymentSummary(p: Payment): NonNullable<Transition['payment']> {
  return { id: p.id, kind: p.kind, outcome: p.outcome, amount: p.amount, currency: p.currency };
}
