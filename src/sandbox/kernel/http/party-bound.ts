import { SandboxApiError } from './problem.js';

/** How a table of short-lived entries is bounded: per party (an app, a client) and in all. */
export interface PartyBound<V> {
  /** Whose an entry is. */
  partyOf: (entry: V) => string;
  /** True for an entry that may be forgotten now. */
  gone: (entry: V) => boolean;
  /** Entries one party may hold: past it, that party's own oldest is forgotten. */
  perParty: number;
  /** Entries held in all: past it a new one is refused (429), never another party's forgotten. */
  total: number;
  /** What an entry is, for the refusal ("pending device sign-ins"). */
  what: string;
}

/**
 * Makes room in `table` for one more entry of `party`: forgets what is gone, then that party's oldest
 * if it holds {@link PartyBound.perParty}; refuses with 429 when the table is full of other parties'
 * live entries. One party can never evict another's (docs/DECISIONS.md §2).
 */
export function makeRoom<V>(table: Map<string, V>, party: string, bound: PartyBound<V>): void {
  let mine = 0;
  let oldestMine: string | undefined;
  for (const [key, entry] of table) {
    if (bound.gone(entry)) table.delete(key);
    else if (bound.partyOf(entry) === party) {
      mine++;
      oldestMine ??= key;
    }
  }
  if (mine >= bound.perParty && oldestMine !== undefined) table.delete(oldestMine);
  else if (table.size >= bound.total) {
    throw new SandboxApiError(429, 'rate_limited', `Too many ${bound.what} at once; retry in a minute.`, {
      'retry-after': '60',
    });
  }
}

/**
 * Wrong guesses per client address (RFC 8628 §5.1: user codes are short, so guessing is limited):
 * at most `limit` misses per `windowMs`; past it every lookup from that address is refused with 429
 * and `Retry-After` until the window ends.
 */
export class GuessLimit {
  private readonly misses = new Map<string, { since: number; count: number }>();

  constructor(
    private readonly now: () => number,
    private readonly limit = 10,
    private readonly windowMs = 60_000,
  ) {}

  /** Refuses (429) an address that used up its misses. */
  check(address: string, form: 'page' | 'api' = 'page'): void {
    const entry = this.current(address);
    if (entry === undefined || entry.count < this.limit) return;
    const wait = Math.max(1, Math.ceil((entry.since + this.windowMs - this.now()) / 1000));
    throw new SandboxApiError(
      429,
      'rate_limited',
      `Too many wrong codes from this address; wait ${wait} s and try again.`,
      { 'retry-after': String(wait) },
      form,
    );
  }

  /** Counts a wrong guess of `address`. */
  miss(address: string): void {
    const entry = this.current(address) ?? { since: this.now(), count: 0 };
    entry.count++;
    this.misses.set(address, entry);
    if (this.misses.size > 10_000) this.misses.delete(this.misses.keys().next().value as string);
  }

  private current(address: string) {
    const entry = this.misses.get(address);
    if (entry !== undefined && entry.since + this.windowMs <= this.now()) {
      this.misses.delete(address);
      return undefined;
    }
    return entry;
  }
}
