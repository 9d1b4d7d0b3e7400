import type {
  BillingPlan,
  BillingStore,
  Payment,
  PaymentBehaviour,
  Subscription,
} from '../../src/sandbox/billing/records.js';

/** The billing store interface over plain Maps: the lifecycle rules tested without a sandbox around them. */
export class MemoryBillingStore implements BillingStore {
  readonly plans = new Map<string, BillingPlan>();
  readonly subs = new Map<string, Subscription>();
  readonly payments: Payment[] = [];
  readonly behaviours = new Map<string, PaymentBehaviour>();
  readonly accounts = new Map<string, string>();
  offset = 0;

  plan(appId: string, planId: string) {
    return this.plans.get(`${appId}/${planId}`);
  }
  addPlan(plan: BillingPlan) {
    this.plans.set(`${plan.app_id}/${plan.id}`, plan);
  }
  subscription(appId: string, userId: string) {
    return this.subs.get(`${appId}/${userId}`);
  }
  putSubscription(sub: Subscription) {
    this.subs.set(`${sub.app_id}/${sub.user_id}`, sub);
  }
  dueBatch(until: number, limit: number) {
    return [...this.subs.values()]
      .filter((s) => s.next_at !== null && s.next_at <= until)
      .sort((a, b) => a.next_at! - b.next_at! || (a.user_id < b.user_id ? -1 : 1))
      .slice(0, limit);
  }
  paymentBehaviour(appId: string, userId: string) {
    return this.behaviours.get(`${appId}/${userId}`) ?? 'succeeds';
  }
  addPayment(p: Payment) {
    this.payments.push(p);
  }
  payoutsAccount(appId: string) {
    return this.accounts.get(appId) ?? null;
  }
  clockOffset() {
    return this.offset;
  }
  setClockOffset(ms: number) {
    this.offset = ms;
  }
}
