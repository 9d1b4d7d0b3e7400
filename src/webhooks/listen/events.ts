import { HEADER } from '../../wire.js';
import type { DeliverySource, ReceivedRecord } from '../journal.js';

/** One delivery's outcome, as `listen` prints it (one line, or one JSON object with --json). */
export interface DeliveryReport {
  time: string;
  id: string;
  event: string | null;
  source: DeliverySource;
  seq: number | null;
  signature: 'valid' | 'invalid' | 'missing' | 'malformed';
  status: 'forwarded' | 'failed' | 'refused' | 'received' | 'duplicate' | 'filtered' | 'pending';
  response_status: number | null;
  /** The handler's answer: how long it took (ms) and the start of its body. */
  response_ms: number | null;
  response_excerpt: string | null;
  attempts: number;
  reason: string | null;
  latency_ms: number | null;
}

/** The report of `record` at `time`, with `status` and no outcome yet. */
export function deliveryReport(
  record: ReceivedRecord,
  time: string,
  status: DeliveryReport['status'],
  signature: DeliveryReport['signature'] = 'valid',
): DeliveryReport {
  return {
    time,
    id: record.id,
    event: record.event ?? record.headers[HEADER.event] ?? null,
    source: record.source,
    seq: record.seq ?? null,
    signature,
    status,
    response_status: null,
    response_ms: null,
    response_excerpt: null,
    attempts: 0,
    reason: null,
    latency_ms: null,
  };
}

/** What the listen engine reports; one renderer prints these (the engine never prints). */
export type ListenEvent =
  | { type: 'secret'; secret: string; source: string }
  | {
      type: 'ready';
      receiver: string | null;
      relay: string | null;
      forward_to: string | null;
      /** The relay position this run resumed after (from the journal); null on a first run. */
      resume_after: number | null;
      /** The relay position now: deliveries after it are forwarded; null when the relay gave none. */
      position: number | null;
      /** Deliveries from an earlier run that wait to be forwarded (first). */
      pending: number;
      journal: string;
    }
  | { type: 'connected'; after: number | null }
  | { type: 'reconnecting'; attempt: number; delay_ms: number; error: string }
  /** Journaled, and not forwarded (no --forward-to): all that happens to it here. */
  | { type: 'verified'; report: DeliveryReport }
  | { type: 'refused'; report: DeliveryReport }
  | { type: 'duplicate'; report: DeliveryReport }
  | { type: 'filtered'; report: DeliveryReport }
  | { type: 'secret_refreshed'; changed: boolean }
  | { type: 'target_down'; id: string; attempt: number; delay_ms: number; error: string; waiting: number }
  | { type: 'target_up'; after_ms: number }
  | { type: 'forwarded'; report: DeliveryReport }
  | { type: 'forward_failed'; report: DeliveryReport; resend: string }
  | { type: 'stopped'; pending: number }
  | { type: 'warning'; message: string }
  | { type: 'fatal'; message: string; status: number; hints?: string[] };
