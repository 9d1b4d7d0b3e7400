import { describe, expect, it } from 'vitest';
import { deliveryReport } from '../../src/webhooks/listen/events.js';
import { reportLine } from '../../src/webhooks/listen/render.js';
import type { ReceivedRecord } from '../../src/webhooks/journal.js';

describe("listen --json's delivery lines", () => {
  const record: ReceivedRecord = {
    t: 'received',
    id: 'dlv_"quoted"\n\u2028',
    at: '2026-11-22T12:00:00.000Z',
    source: 'relay',
    seq: 7,
    event: 'user.authorized',
    headers: {},
    body: '{}',
  };

  it('write every field of a report, as JSON.stringify would', () => {
    const report = deliveryReport(record, '2026-11-22T12:00:01.000Z', 'failed');
    Object.assign(report, { response_status: 422, attempts: 3, reason: 'HTTP 422 "no"', latency_ms: 12.5 });
    const line = reportLine('forward_failed', report, 'mkt webhooks resend "x"');
    expect(line).toBe(
      JSON.stringify({ type: 'forward_failed', ...report, resend: 'mkt webhooks resend "x"' }),
    );
  });

  it('write nulls as null', () => {
    const report = deliveryReport({ ...record, seq: undefined, event: undefined }, record.at, 'duplicate');
    expect(JSON.parse(reportLine('duplicate', report))).toEqual({ type: 'duplicate', ...report });
    expect(report.event).toBeNull();
  });
});
