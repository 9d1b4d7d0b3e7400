import { describe, expect, it } from 'vitest';
import { formatMoney, minorUnits, parseMoney } from '../../src/plans/money.js';
import { slugify } from '../../src/plans/plans.js';

describe('parseMoney: a decimal price in minor units, with the currency’s own decimals', () => {
  it.each([
    ['9.99', 'USD', 999],
    ['9.9', 'USD', 990],
    ['10', 'USD', 1000],
    ['0.01', 'EUR', 1],
    ['10', 'JPY', 10],
    ['5000', 'JPY', 5000],
    ['1.250', 'KWD', 1250],
    ['1.5', 'KWD', 1500],
    ['2.5', 'IQD', 2500], // ISO 4217 says 3 decimals, where Intl/CLDR says 0
    ['12.34', 'HUF', 1234], // ISO 4217 says 2, where CLDR says 0
    ['1.2345', 'CLF', 12345],
    ['9.99', 'usd', 999],
  ])('%s %s → %i', (price, currency, amount) => {
    expect(parseMoney(price, currency)).toEqual({ amount, currency: currency.toUpperCase() });
  });

  it.each([
    ['9.999', 'USD', /at most 2 decimals/],
    ['10.5', 'JPY', /no decimals/],
    ['1.2345', 'KWD', /at most 3 decimals/],
    ['0', 'USD', /positive/],
    ['0.00', 'USD', /positive/],
    ['-1', 'USD', /positive/],
    ['1e3', 'USD', /positive/],
    ['1,000', 'USD', /positive/],
    ['.5', 'USD', /positive/],
    ['abc', 'USD', /positive/],
    ['99999999999999999999', 'USD', /positive/],
    ['9.99', 'XYZ', /ISO 4217/],
    ['9.99', 'US', /ISO 4217/],
    ['9.99', 'XAU', /ISO 4217/],
  ])('%s %s is refused as a usage error', (price, currency, message) => {
    expect(() => parseMoney(price, currency)).toThrow(message);
    try {
      parseMoney(price, currency);
    } catch (err) {
      expect((err as { exitCode: number }).exitCode).toBe(2);
    }
  });

  it('knows the minor units of the ISO 4217 exceptions', () => {
    expect([
      minorUnits('JPY'),
      minorUnits('USD'),
      minorUnits('KWD'),
      minorUnits('CLF'),
      minorUnits('XXX'),
    ]).toEqual([0, 2, 3, 4, undefined]);
  });

  it('formats minor units back for people', () => {
    expect(formatMoney({ amount: 999, currency: 'USD' })).toBe('9.99 USD');
    expect(formatMoney({ amount: 1005, currency: 'USD' })).toBe('10.05 USD');
    expect(formatMoney({ amount: 500, currency: 'JPY' })).toBe('500 JPY');
    expect(formatMoney({ amount: 1250, currency: 'KWD' })).toBe('1.250 KWD');
    expect(formatMoney({ amount: 7, currency: 'ABC' })).toBe('7 ABC (minor units)');
    expect(formatMoney(null)).toBe('-');
  });
});

describe('slugify: a plan id from its name', () => {
  it.each([
    ['Pro Monthly', 'pro-monthly'],
    ['Pro (monthly)', 'pro-monthly'],
    ['  Équipe Annuel  ', 'equipe-annuel'],
    ['Team_Plan 2024!', 'team-plan-2024'],
    ['!!!', ''],
  ])('%s → %s', (name, slug) => {
    expect(slugify(name)).toBe(slug);
  });
});
