import { writeFileAtomic } from '../fs-atomic.js';

/**
 * Saves a snapshot at most once per `delayMs` no matter how many changes arrive: every change marks
 * the state dirty, one timer writes the newest snapshot, and a change during a write queues one more.
 */
export class CoalescingWriter {
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private dirty = false;
  private lastWriteMs = 0;

  constructor(
    private readonly path: string,
    private readonly snapshot: () => string,
    private readonly delayMs = 50,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /** Notes that the state changed; a write follows shortly. */
  markDirty(): void {
    this.dirty = true;
    if (this.timer === undefined && this.writing === undefined) {
      this.timer = setTimeout(() => void this.run(), this.nextDelay());
    }
  }

  /** Waits at least twice the last write, so large states spend at most a third of the time saving. */
  private nextDelay(): number {
    return Math.max(this.delayMs, 2 * this.lastWriteMs);
  }

  /** Writes now if anything changed, and waits for every pending write. */
  async flush(): Promise<void> {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    while (this.writing !== undefined || this.dirty) {
      if (this.writing !== undefined) await this.writing;
      else await this.run();
    }
  }

  private async run(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.dirty) return;
    this.dirty = false;
    const started = performance.now();
    const text = this.snapshot();
    this.writing = writeFileAtomic(this.path, text).catch(this.onError);
    await this.writing;
    this.writing = undefined;
    this.lastWriteMs = performance.now() - started;
    if (this.dirty && this.timer === undefined)
      this.timer = setTimeout(() => void this.run(), this.nextDelay());
  }
}
