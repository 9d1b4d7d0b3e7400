import type { DeliveryRecord } from './records.js';

/** What a ledger answers about an app's kept deliveries. */
interface DeliverySource {
  deliveryAfter(appId: string, seq: number): DeliveryRecord | undefined;
  lastSeq(appId: string): number;
}

/**
 * The relay's view of one app's deliveries: the kept ones (in the database) and how far they were
 * offered to listeners (in memory: a delivery is offered once committed; after a start, all are).
 */
export class DeliveryHistory {
  constructor(
    private readonly source: DeliverySource,
    private readonly appId: string,
    /** The newest sequence number that is committed and was offered to listeners. */
    public offeredSeq: number,
  ) {}

  /** The oldest kept delivery with a sequence number above `seq`, if any. */
  after(seq: number): DeliveryRecord | undefined {
    return this.source.deliveryAfter(this.appId, seq);
  }

  /** The newest sequence number ever given out. */
  get lastSeq(): number {
    return this.source.lastSeq(this.appId);
  }
}
