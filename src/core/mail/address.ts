import addressparser from 'nodemailer/lib/addressparser';

/** What an address may hold on either side of its `@`: the database's check (sql/072) says the same. */
const BARE = /^[^@\s,;:<>()"]+@[^@\s,;:<>()"]+$/;

/**
 * The one bare address `value` is, read by the mailer's own parser (nodemailer's addressparser,
 * which is what turns a recipient into SMTP envelope addresses), or null: a list (`a@x, b@y`
 * would mail both), a display name or group, a line break or any control character (a CR/LF
 * value would mail the part after the break), or anything the parser reads otherwise than as
 * written. Used where a billing recipient is written and again before a delivery is sent.
 */
export function singleAddress(value: string | null | undefined): string | null {
  if (typeof value !== 'string' || value.length > 254 || /\p{Cc}/u.test(value)) return null;
  const parsed = addressparser(value);
  if (parsed.length !== 1) return null;
  const [one] = parsed;
  if (!one || 'group' in one || one.name || one.address !== value || !BARE.test(one.address)) return null;
  return one.address;
}

/** The first address in `value` (`Name <a@x>, b@y` gives `a@x`), read by the same parser; null when there is none. */
export function firstAddress(value: string): string | null {
  return addressparser(value, { flatten: true })[0]?.address || null;
}
