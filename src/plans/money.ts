import { UsageError } from '../errors.js';

/** An amount in the currency's minor units (cents for USD, yen for JPY, fils for KWD), as the API stores it. */
export interface Money {
  amount: number;
  currency: string;
}

// ISO 4217 active codes with their minor units; most have 2, the exceptions are listed apart.
// A table rather than Intl: Intl follows CLDR, which differs from ISO 4217 (IQD, HUF) and by ICU version.
const TWO_DECIMALS =
  'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF ' +
  'CHE CHF CHW CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ ' +
  'GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD ' +
  'MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON ' +
  'RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS ' +
  'UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG';
const ZERO_DECIMALS = 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF';
const THREE_DECIMALS = 'BHD IQD JOD KWD LYD OMR TND';
const FOUR_DECIMALS = 'CLF UYW';

const MINOR_UNITS = new Map<string, number>();
for (const [codes, digits] of [
  [TWO_DECIMALS, 2],
  [ZERO_DECIMALS, 0],
  [THREE_DECIMALS, 3],
  [FOUR_DECIMALS, 4],
] as const) {
  for (const code of codes.split(' ')) MINOR_UNITS.set(code, digits);
}

/** The number of decimals of an ISO 4217 currency (JPY 0, USD 2, KWD 3), or undefined for an unknown code. */
export function minorUnits(currency: string): number | undefined {
  return MINOR_UNITS.get(currency.toUpperCase());
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

/** A price for people: "9.99 USD", "500 JPY"; an unknown currency is shown in minor units. */
export function formatMoney(money: Money | null | undefined): string {
  if (!money) return '-';
  const digits = minorUnits(money.currency);
  if (digits === undefined) return `${money.amount} ${money.currency} (minor units)`;
  const sign = money.amount < 0 ? '-' : '';
  const abs = Math.abs(money.amount);
  const whole = Math.floor(abs / 10 ** digits);
  const fraction = digits ? `.${String(abs % 10 ** digits).padStart(digits, '0')}` : '';
  return `${sign}${whole}${fraction} ${money.currency}`;
}
