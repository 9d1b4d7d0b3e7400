import { UsageError } from '../errors.js';
import { formatAmount, minorUnits } from '../wire.js';

export { minorUnits };

/** An amount in the currency's minor units (cents for USD, yen for JPY, fils for KWD), as the API stores it. */
export interface Money {
  amount: number;
  currency: string;
}

/** Checks a currency code and returns it upper-cased; a UsageError otherwise. */
function parseCurrency(currency: string): string {
  const code = currency.trim().toUpperCase();
  if (minorUnits(code) === undefined) {
    throw new UsageError(
      `"${currency}" is not an ISO 4217 currency code; use a three-letter code such as USD, EUR, JPY or KWD.`,
      { code: 'invalid_currency' },
    );
  }
  return code;
}

/**
 * Turns a decimal price ("9.99") in a currency into minor units (999 for USD), exactly (no floating
 * point). Refuses anything but a positive decimal with at most the currency's number of decimals.
 */
export function parseMoney(price: string, currency: string): Money {
  const code = parseCurrency(currency);
  const digits = minorUnits(code)!;
  const accepted =
    digits === 0
      ? `a positive whole number (${code} has no decimals), such as 500`
      : `a positive decimal with at most ${digits} decimals for ${code}, such as ${(1999 / 100).toFixed(digits)}`;
  const match = /^(\d+)(?:\.(\d+))?$/.exec(price.trim());
  if (!match || (match[2] ?? '').length > digits) {
    throw new UsageError(`Invalid price "${price}": expected ${accepted}.`, { code: 'invalid_price' });
  }
  const amount = Number(match[1]) * 10 ** digits + Number((match[2] ?? '').padEnd(digits, '0') || '0');
  if (amount <= 0 || !Number.isSafeInteger(amount)) {
    throw new UsageError(`Invalid price "${price}": expected ${accepted}.`, { code: 'invalid_price' });
  }
  return { amount, currency: code };
}

/** A price for people: "9.99 USD", "500 JPY", "-" for none (formatAmount, the one money formatter). */
export function formatMoney(money: Money | null | undefined): string {
  return money ? formatAmount(money.amount, money.currency) : '-';
}
