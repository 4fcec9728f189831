import { z } from 'zod';

/**
 * Money in integer minor units of an ISO 4217 currency (cents, yen): amounts are never floats, a
 * line's amount is rounded once, and every sum is a sum of rounded lines (so a document's total
 * always equals the sum of what it lists).
 */

/** The currencies this runtime's Intl knows (ISO 4217), so every accepted code can be formatted. */
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

export const isCurrency = (code: string): boolean => CURRENCIES.has(code);

export const currencyField = z
  .string()
  .trim()
  .toUpperCase()
  .refine(isCurrency, 'Not an ISO 4217 currency code.')
  .describe('ISO 4217 currency code, e.g. EUR, USD, JPY.');

/** The most an hourly rate may be, in minor units (keeps a day's line inside a 32-bit integer). */
export const MAX_HOURLY_MINOR = 50_000_000;

/**
 * How many minor units a currency has after the decimal point (EUR 2, JPY 0, KWD 3), as Intl knows
 * it; remembered per code, because making the Intl.NumberFormat that answers costs about 30 µs and
 * a document asks for every amount it prints (a 667-line csv asked 2,000 times: 60 ms of its 65).
 */
export function minorDigits(currency: string): number {
  let digits = digitsByCurrency.get(currency);
  if (digits === undefined) {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    digitsByCurrency.set(currency, digits);
  }
  return digits;
}

const digitsByCurrency = new Map<string, number>();

/**
 * A line's amount: minutes × hourly rate / 60, rounded once, half away from zero (half-up on the
 * magnitude), so a correction of −m minutes cancels its original of m minutes to the unit. Exact:
 * integers below 2^53 (1440 × 50,000,000). The SQL at allocation (lineAmountSql) rounds the same way
 * (numeric `round`), and test/billing-money.test.ts checks that they agree.
 */
export function lineAmountMinor(minutes: number, hourlyMinor: number): number {
  const product = minutes * hourlyMinor;
  const magnitude = Math.floor((Math.abs(product) + 30) / 60);
  return product < 0 ? 0 - magnitude : magnitude; // 0 - 0 is +0: never a "-0" amount
}

/** Minor units as a plain decimal string with the currency's digits (`1250` EUR → `12.50`, `-5` → `-0.05`, JPY `700` → `700`). */
export function minorToDecimal(minor: number, currency: string): string {
  const digits = minorDigits(currency);
  const sign = minor < 0 ? '-' : '';
  const abs = String(Math.abs(minor)).padStart(digits + 1, '0');
  return digits === 0 ? `${sign}${abs}` : `${sign}${abs.slice(0, -digits)}.${abs.slice(-digits)}`;
}

/**
 * The tax of a document: its subtotal (a sum of rounded lines) × basis points / 10,000, rounded
 * once, half away from zero, in BigInt (a large subtotal times 10,000 leaves the exact range of a double).
 */
export function taxMinor(subtotalMinor: number, basisPoints: number): number {
  const product = BigInt(subtotalMinor) * BigInt(basisPoints);
  const magnitude = ((product < 0n ? -product : product) + 5000n) / 10000n;
  return Number(product < 0n ? -magnitude : magnitude);
}

/** A document's money: the subtotal of its lines, the tax on it, and the total due (subtotal + tax). */
export function documentMoney(subtotalMinor: number, basisPoints: number): { subtotalMinor: number; taxMinor: number; totalDueMinor: number } {
  const tax = taxMinor(subtotalMinor, basisPoints);
  return { subtotalMinor, taxMinor: tax, totalDueMinor: subtotalMinor + tax };
}

/**
 * A decimal amount as typed by a person (`95`, `95.5`, `1234.50`; JPY `700`) in minor units of
 * `currency`: exact (string digits, no float), NaN when it is not a plain decimal or has more
 * decimals than the currency has, so the operation's schema refuses it like any bad number.
 */
export function decimalToMinor(text: string, currency: string): number {
  const m = /^(\d{1,12})(?:\.(\d+))?$/.exec(text.trim());
  if (!m) return Number.NaN;
  const digits = /^[A-Za-z]{3}$/.test(currency.trim()) ? minorDigits(currency.trim().toUpperCase()) : 2;
  const fraction = m[2] ?? '';
  if (fraction.length > digits) return Number.NaN;
  return Number(m[1]! + fraction.padEnd(digits, '0'));
}
