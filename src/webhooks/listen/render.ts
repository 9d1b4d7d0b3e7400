import type { Output } from '../../output/output.js';
import { oneLine, safeText } from '../../output/safe-text.js';
import type { DeliveryReport, ListenEvent } from './events.js';

const json = JSON.stringify;

/**
 * `{"type":…, the report's fields…, "resend":…}`, written field by field: ~2 µs a delivery less than
 * a generic serialization (BENCHMARKS.md). Times and the enumerated fields need no escaping; the
 * test of this file checks that every field of a report is written.
 */
export function reportLine(type: string, r: DeliveryReport, resend?: string): string {
  return `{"type":"${type}","time":"${r.time}","id":${json(r.id)},"event":${json(r.event)},"source":"${r.source}","seq":${r.seq},"signature":"${r.signature}","status":"${r.status}","response_status":${r.response_status},"response_ms":${r.response_ms},"response_excerpt":${json(r.response_excerpt)},"attempts":${r.attempts},"reason":${json(r.reason)},"latency_ms":${r.latency_ms}${resend === undefined ? '' : `,"resend":${json(resend)}`}}`;
}

/**
 * The one renderer of listen's events: with --json, deliveries and `ready` as JSON lines on stdout
 * (progress as JSON lines on stderr); else one line per delivery on stdout and progress on stderr.
 * Delivery lines go out in one write per turn of the event loop. `flush` writes what is left.
 */
export function listenRenderer(
  out: Output,
  options: { json: boolean; appId: string | undefined },
): { render(event: ListenEvent): void; flush(): void } {
  let batch = '';
  let history = 0;
  // The first connection is in the `Receiving on …` line; later ones (reconnects) get their own.
  let ready = false;
  const flush = () => {
    if (batch) out.data(batch);
    batch = '';
  };
  const data = (text: string | undefined) => {
    if (text === undefined) return;
    if (!batch) setImmediate(flush);
    batch += `${text}\n`;
    if (batch.length > 65_536) flush();
  };
  const render = (e: ListenEvent): void => {
    if (options.json) {
      // Through --jq when given (out.jsonLine), one line each.
      if ('report' in e)
        out.jsonLine(reportLine(e.type, e.report, 'resend' in e ? e.resend : undefined), data);
      else if (e.type === 'ready' || e.type === 'secret') out.jsonLine(JSON.stringify(e), data);
      else if (e.type !== 'connected') out.info(JSON.stringify(e));
      return;
    }
    switch (e.type) {
      case 'secret':
        data(e.secret);
        out.info(`(signing secret from ${e.source})`);
        return;
      case 'ready': {
        const where = [
          e.relay
            ? `the relay stream of ${options.appId}${e.resume_after !== null ? ` (resuming after #${e.resume_after})` : e.position !== null ? ` (new deliveries after #${e.position})` : ''}`
            : null,
          e.receiver,
        ].filter(Boolean);
        out.info(`Receiving on ${where.join(' and ')}`);
        out.info(
          e.forward_to
            ? `Forwarding to ${e.forward_to}`
            : 'Not forwarding (no --forward-to): deliveries are verified and journaled only.',
        );
        out.info(
          e.pending === 0
            ? 'No deliveries from an earlier run are waiting.'
            : e.forward_to
              ? `${e.pending} ${e.pending === 1 ? 'delivery' : 'deliveries'} from an earlier run ${e.pending === 1 ? 'is' : 'are'} waiting; forwarded first, to ${e.forward_to}.`
              : `${e.pending} ${e.pending === 1 ? 'delivery' : 'deliveries'} from an earlier run wait for a listen with --forward-to.`,
        );
        out.success(`Ready. ${out.dim(`Journal: ${e.journal}   Ctrl-C to stop.`)}`);
        ready = true;
        return;
      }
      case 'connected':
        if (ready && e.after !== null) out.info(out.dim(`Relay connected (after #${e.after}).`));
        return;
      case 'reconnecting':
        out.warn(
          `Relay connection lost (${safeText(e.error)}); reconnecting in ${(e.delay_ms / 1000).toFixed(1)} s (attempt ${e.attempt}).`,
        );
        return;
      case 'target_down':
        out.warn(
          `The forward target is not taking deliveries (${safeText(e.error)}); ${e.waiting} waiting, trying again in ${(e.delay_ms / 1000).toFixed(1)} s.`,
        );
        return;
      case 'target_up':
        out.info(
          `The forward target answers again (after ${(e.after_ms / 1000).toFixed(1)} s); forwarding what waited.`,
        );
        return;
      case 'secret_refreshed':
        if (e.changed) out.info('The signing secret was rotated; verifying with the new one.');
        return;
      case 'stopped':
        flush();
        out.info(
          `Journal flushed.${e.pending ? ` ${e.pending} ${e.pending === 1 ? 'delivery waits' : 'deliveries wait'} to be forwarded on the next start.` : ''} Bye.`,
        );
        return;
      case 'warning':
        out.warn(safeText(e.message)); // may quote a sender (an id, a server's error)
        return;
      case 'fatal':
        return;
      case 'filtered':
        if (e.report.reason !== 'history') return data(line(e.report));
        if (++history === 1)
          out.info(
            out.dim(
              'Older relay deliveries (before this first run) are journaled, not forwarded: mkt webhooks deliveries --status filtered',
            ),
          );
        return;
      case 'forward_failed':
        data(`${line(e.report)}  retry: ${e.resend}`);
        return;
      default:
        data(line(e.report));
    }
  };
  return { render, flush };
}

/** One delivery as a line; what a sender or a handler chose (event, id, reason, answer) escaped. */
function line(r: DeliveryReport): string {
  return [
    r.time.slice(11, 19),
    safeText(r.event ?? '-').padEnd(22),
    safeText(r.id),
    r.source,
    `signature:${r.signature}`,
    r.status === 'forwarded'
      ? `→ ${r.response_status}${r.attempts > 1 ? ` after ${r.attempts} tries` : ''}`
      : r.status + (r.reason ? ` (${safeText(r.reason)})` : ''),
    // What the handler said when it refused: the first words of its answer.
    ...(r.status === 'failed' && r.response_excerpt ? [`answer: ${oneLine(r.response_excerpt)}`] : []),
  ].join('  ');
}
