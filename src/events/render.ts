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

/** Deliveries as a table (tab-separated off a terminal), every server value made printable. */
export function showEventList(out: Output, deliveries: EventDelivery[]): void {
  out.table(deliveries, [
    { header: 'id', get: (d) => printable(d.id) },
    { header: 'event', get: (d) => printable(d.event) },
    { header: 'state', get: (d) => printable(d.state) },
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
    ['state', printable(delivery.state)],
    ['url', printable(delivery.url ?? '(no webhook URL)')],
    ['created', printable(delivery.created_at)],
    ...(delivery.next_attempt_at
      ? [['next attempt', printable(delivery.next_attempt_at)] as [string, string]]
      : []),
  ]);
  const attempts = delivery.attempts ?? [];
  out.data('');
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
