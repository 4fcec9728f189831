import { invalid } from '../errors.ts';

/**
 * An IBAN as printed on a document: spaces removed, upper-cased, and checked by ISO 13616's
 * mod-97 (a mistyped digit is refused here, not found by a client whose transfer bounced).
 * 400 `bad_iban`.
 */
export function normaliseIban(raw: string): string {
  const iban = raw.replace(/\s+/g, '').toUpperCase();
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$/.test(iban) || mod97(iban.slice(4) + iban.slice(0, 4)) !== 1) {
    throw invalid('bad_iban', { field: 'bankIban' }, 'bankIban is not a valid IBAN (country, check digits, account).');
  }
  return iban;
}

/** A BIC (ISO 9362): 8 or 11 characters, upper-cased. 400 `bad_bic`. */
export function normaliseBic(raw: string): string {
  const bic = raw.replace(/\s+/g, '').toUpperCase();
  if (!/^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$/.test(bic)) throw invalid('bad_bic', { field: 'bankBic' }, 'bankBic must be a BIC of 8 or 11 characters.');
  return bic;
}

/** The remainder mod 97 of the number the letters spell (A = 10 … Z = 35), digit by digit. */
function mod97(s: string): number {
  let r = 0;
  for (const ch of s) {
    const v = ch >= 'A' ? String(ch.charCodeAt(0) - 55) : ch;
    for (const d of v) r = (r * 10 + Number(d)) % 97;
  }
  return r;
}

/** An IBAN printed in groups of four, as banks and clients read it. */
export const ibanGroups = (iban: string): string => iban.replace(/(.{4})(?=.)/g, '$1 ');
