// What the wire fixes: the published interface (docs/INTERFACE.md) and our decisions where it is
// silent (docs/DECISIONS.md). The CLI and the sandbox both take these from here.

/** The published event kinds (docs/INTERFACE.md §6). */
export const EVENT_NAMES = [
  'user.authorized',
  'subscription.created',
  'subscription.cancelled',
  'user.revoked',
] as const;

/** An event kind. */
export type EventName = (typeof EVENT_NAMES)[number];

/** Request headers, lower-cased as Node presents them (docs/INTERFACE.md §4.5, §5; docs/DECISIONS.md §2). */
export const HEADER = {
  signature: 'x-marketplace-signature',
  delivery: 'x-marketplace-delivery',
  /** The event kind, beside the body (ours, for filtering before parsing). */
  event: 'x-marketplace-event',
  /** `synthetic` on a simulator event sent as given, without a transition (ours). */
  simulated: 'x-marketplace-simulated',
  apiKey: 'x-api-key',
  /** The id the marketplace gives every API response (`req_…`), as its request log names it. */
  requestId: 'x-request-id',
} as const;

/**
 * Requests per minute allowed for each kind of API key (docs/INTERFACE.md §8), and for a Bearer token's
 * grant (an access token and those refreshed from it; docs/PROTOCOL.md, Rate limits).
 */
export const RATE_LIMITS = { test: 100, live: 1000, token: 1000 } as const;

/** An app id as the marketplace writes it (`app_…`): the one check of one. */
export const APP_ID = /^app_[A-Za-z0-9_-]+$/;

/** Where the sandbox listens by default, and so the site used when nothing else is set. */
export const DEFAULT_SANDBOX_PORT = 7878;

/** The default site: the sandbox on its default port. */
export const DEFAULT_SITE_URL = `http://127.0.0.1:${DEFAULT_SANDBOX_PORT}`;

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

/**
 * The number of decimals of an ISO 4217 currency (JPY 0, USD 2, KWD 3), or undefined for an unknown
 * code: a price's `amount` is in these minor units (docs/PROTOCOL.md, plans).
 */
export function minorUnits(currency: string): number | undefined {
  return MINOR_UNITS.get(currency.toUpperCase());
}

/**
 * An amount in a currency's minor units as people write it, with the currency's own decimals:
 * "99.00 USD", "1200 JPY", "1.250 KWD"; an unknown currency says its amount is in minor units. The
 * one money formatter: the CLI's output, the sandbox's messages and its console all show money so.
 */
export function formatAmount(amount: number, currency: string): string {
  const digits = minorUnits(currency);
  if (digits === undefined) return `${amount} ${currency} (minor units)`;
  const abs = Math.abs(amount);
  const whole = Math.floor(abs / 10 ** digits);
  const fraction = digits ? `.${String(abs % 10 ** digits).padStart(digits, '0')}` : '';
  return `${amount < 0 ? '-' : ''}${whole}${fraction} ${currency.toUpperCase()}`;
}

/** The loopback host names: where plain http is allowed (RFC 8252 §7.3) and local servers answer. */
export const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '[::1]'] as const;
