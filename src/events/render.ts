import type { Output } from '../output/output.js';
import { safeText } from '../output/safe-text.js';

/** A server's value, shown safely on a terminal (control characters escaped). */
export const printable = (value: unknown): string =>
  safeText(value === undefined || value === null ? '' : String(value));
import { lastAttempt, type DeliveryAttempt, type EventDelivery } from './events.js';

/** "200 in 12 ms", or the error of an attempt that got no answer. */
export function describeAttempt(attempt: Partial<DeliveryAttempt> | undefined): string {
  if (!attempt) return '-';
  const latency = typeof attempt.latency_ms === 'number' ? ` in ${attempt.latency_ms} ms` : '';
  if (typeof attempt.status === 'number') return `${attempt.status}${latency}`;
  return `${printable(attempt.error ?? 'no answer')}${latency}`;
}

/**
 * The state as a person reads it: a delivery never sent to a URL says so, with what listen's journal
 * on this machine recorded of it when it holds something.
 */
export function stateText(d: EventDelivery): string {
  if (d.state !== 'not_sent') return printable(d.state);
  if (!d.relay) return 'not sent: no webhook URL';
  const answer = d.relay.response_status === null ? '' : ` ${d.relay.response_status}`;
  return `relayed: ${printable(d.relay.status)}${answer}`;
}

/** Deliveries as a table (tab-separated off a terminal), every server value made printable. */
export function showEventList(out: Output, deliveries: EventDelivery[]): void {
  out.table(deliveries, [
    { header: 'id', get: (d) => printable(d.id) },
    { header: 'event', get: (d) => printable(d.event) },
    { header: 'state', get: (d) => stateText(d) },
    { header: 'attempts', get: (d) => d.attempts?.length ?? d.attempt_count },
    { header: 'last answer', get: (d) => describeAttempt(lastAttempt(d)) },
    { header: 'created', get: (d) => printable(d.created_at) },
  ]);
}

/** One delivery: its fields, then one line per attempt with the start of what the URL answered. */
export function showEvent(out: Output, delivery: EventDelivery): void {
  out.fields([
    ['id', printable(delivery.id)],
    ['event', printable(delivery.event)],
    ['state', stateText(delivery)],
    ['url', printable(delivery.url ?? '(no webhook URL)')],
    ['created', printable(delivery.created_at)],
    ...(delivery.next_attempt_at
      ? [['next attempt', printable(delivery.next_attempt_at)] as [string, string]]
      : []),
  ]);
  const attempts = delivery.attempts ?? [];
  out.data('');
  if (delivery.state === 'not_sent') {
    out.data(
      delivery.relay
        ? `Not sent to a URL (the app has no webhook URL); mkt webhooks listen recorded it ${printable(delivery.relay.status)}${delivery.relay.response_status === null ? '' : ` (your handler answered ${delivery.relay.response_status})`} at ${printable(delivery.relay.at)}.`
        : 'Not sent to a URL: the app had no webhook URL, so it went only over the relay (mkt webhooks listen), which recorded nothing of it on this machine.',
    );
    return;
  }
  if (attempts.length === 0) {
    out.data('No attempts yet.');
    return;
  }
  attempts.forEach((a, i) => {
    out.data(`Attempt ${i + 1}  ${printable(a.at)}  ${describeAttempt(a)}`);
    if (a.status !== null && a.error) out.data(`  ${printable(a.error)}`);
    const excerpt = a.response_excerpt ? printable(a.response_excerpt.slice(0, 300)) : '';
    if (excerpt) out.data(`  answered: ${excerpt}${a.response_excerpt!.length > 300 ? '…' : ''}`);
  });
}
