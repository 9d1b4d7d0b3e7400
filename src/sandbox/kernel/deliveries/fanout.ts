import type { ServerResponse } from 'node:http';
import type { DeliveryHistory } from '../storage/delivery-history.js';
import { writeOpen, type Streams } from '../streams.js';
import type { DeliveryRecord } from '../storage/records.js';
import { outboundHeaders } from '../../../wire/delivery.js';

const KEEP_ALIVE_MS = 15_000;
/** What a client should wait before reconnecting (the SSE `retry:` field). */
const RETRY_MS = 1_000;
/** A listener that lets more than this pile up unread is cut off; it resumes with Last-Event-ID. */
export const MAX_UNREAD_BYTES = 1024 * 1024;

/** Whose stream this is: the app, and the key or token grant (family) that opened it. */
export interface ListenerOwner {
  appId: string;
  keyId?: string;
  family?: string;
}

interface Listener extends ListenerOwner {
  res: ServerResponse;
  /** False while the history is replayed: live frames wait for the replay to catch up. */
  live: boolean;
}

/**
 * The relay's open streams (Server-Sent Events). A delivery is offered once it is on disk; a slow
 * reader is cut off past {@link MAX_UNREAD_BYTES}; each stream is registered in {@link Streams},
 * which ends it when the credential that opened it is gone.
 */
export class Relay {
  private readonly listeners = new Set<Listener>();

  constructor(
    private readonly history: (appId: string) => DeliveryHistory,
    private readonly streams: Streams,
  ) {}

  /**
   * Attaches an SSE response. With `lastEventId`: every kept delivery after it (written as the
   * client reads), then live ones. Without (or with one beyond the newest, after a reset): a
   * `position` event naming the newest sequence number (0 when none), then live deliveries.
   */
  async subscribe(res: ServerResponse, owner: ListenerOwner, lastEventId: number | undefined): Promise<void> {
    const h = this.history(owner.appId);
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write(`retry: ${RETRY_MS}\n: connected\n\n`);
    // Registered at once so that a revocation during the replay closes it too.
    const listener: Listener = { ...owner, res, live: false };
    this.listeners.add(listener);
    this.streams.add(res, { kind: 'relay', ...owner });
    res.on('close', () => this.listeners.delete(listener));
    if (lastEventId === undefined || lastEventId > h.offeredSeq) res.write(positionFrame(h.offeredSeq));
    else {
      let cursor = lastEventId;
      for (let d = h.after(cursor); d !== undefined && d.seq <= h.offeredSeq; d = h.after(cursor)) {
        cursor = d.seq;
        if (!res.write(sseFrame(d))) {
          // Whichever comes first; the other listener goes too (a long replay waits here often).
          await new Promise<void>((resolve) => {
            const go = () => {
              res.off('drain', go);
              res.off('close', go);
              resolve();
            };
            res.on('drain', go);
            res.on('close', go);
          });
          if (res.destroyed || res.writableEnded) return;
        }
        if (res.writableEnded) return;
      }
    }
    listener.live = true;
    const keepAlive = setInterval(() => writeOpen(res, ': keep-alive\n\n'), KEEP_ALIVE_MS);
    res.on('close', () => clearInterval(keepAlive));
  }

  /** Offers a delivery (already on disk) to the app's live listeners; answers how many got it. */
  offer(d: DeliveryRecord): number {
    const frame = sseFrame(d);
    let count = 0;
    for (const l of this.listeners) {
      if (l.appId !== d.app_id || !l.live || l.res.writableEnded) continue;
      if (l.res.writableLength > MAX_UNREAD_BYTES) {
        l.res.destroy();
        continue;
      }
      l.res.write(frame);
      count++;
    }
    return count;
  }
}

function sseFrame(d: DeliveryRecord): string {
  const data = JSON.stringify({ delivery_id: d.id, headers: outboundHeaders(d), body: d.body });
  return `id: ${d.seq}\nevent: delivery\ndata: ${data}\n\n`;
}

function positionFrame(seq: number): string {
  return `id: ${seq}\nevent: position\ndata: ${JSON.stringify({ last_id: seq })}\n\n`;
}
