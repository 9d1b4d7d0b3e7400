import { describe, expect, it } from 'vitest';
import { isoStamp, randomId } from '../../src/sandbox/kernel/ids.js';

// The sandbox makes its own timestamps and identifiers (a year's advance makes hundreds of
// thousands): they must read exactly as Date#toISOString and fresh random bytes would.

describe('isoStamp', () => {
  it('writes every time as Date#toISOString does, across days, years and leap days', () => {
    const times: number[] = [];
    // A year in steps that are not a divisor of a day, back and forth across midnight.
    for (let t = Date.parse('2027-12-30T00:00:00Z'); t < Date.parse('2029-03-02T00:00:00Z'); t += 3_601_007)
      times.push(t, t - 86_399_999, t + 999);
    times.push(
      0,
      -1,
      -86_400_000,
      Date.parse('2028-02-29T23:59:59.999Z'),
      Date.parse('2028-03-01T00:00:00.000Z'),
      Date.parse('9999-12-31T23:59:59.999Z'),
      Date.parse('+010000-01-01T00:00:00.000Z'),
      Date.parse('-000001-06-15T12:00:00.000Z'),
      8.64e15,
      1.5,
    );
    for (const t of times) expect(isoStamp(t), String(t)).toBe(new Date(t).toISOString());
  });

  it('refuses an invalid time, as Date#toISOString does', () => {
    expect(() => isoStamp(Number.NaN)).toThrow(RangeError);
    expect(() => isoStamp(8.64e15 + 1)).toThrow(RangeError);
  });
});

describe('randomId', () => {
  it('is the prefix and the asked number of bytes in hex, never twice, past many refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const bytes = 1 + (i % 16);
      const id = randomId('pay', bytes);
      expect(id).toMatch(new RegExp(`^pay_[0-9a-f]{${2 * bytes}}$`));
      if (bytes >= 8) {
        expect(seen.has(id)).toBe(false);
        seen.add(id);
      }
    }
    expect(randomId('usr')).toMatch(/^usr_[0-9a-f]{20}$/);
  });
});
