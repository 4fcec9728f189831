import { hash, randomBytes, randomInt, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;
const SCRYPT = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `wt_` + 40 base62 characters, uniformly drawn. */
export function newApiToken(): string {
  let s = 'wt_';
  for (let i = 0; i < 40; i++) s += BASE62[randomInt(62)];
  return s;
}

/** What `newApiToken` makes: anything else is refused before a database lookup. */
export const API_TOKEN_PATTERN = /^wt_[A-Za-z0-9]{40}$/;

export function newOpaqueSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

// crypto.hash: one call, no Hash object per digest (createHash cost several microseconds per request)
export function sha256(value: string): Buffer {
  return hash('sha256', value, 'buffer');
}

/** The SHA-256 of a secret as text: what an in-memory map is keyed by, so the map never holds the secret. */
export function sha256Key(value: string): string {
  return hash('sha256', value, 'base64');
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, 32, SCRYPT);
  return `scrypt$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const [scheme, saltB64, keyB64] = (stored ?? '').split('$');
  if (scheme !== 'scrypt' || !saltB64 || !keyB64) {
    // Spend the same time as a real check so unknown emails are not distinguishable.
    await scryptAsync(password, Buffer.alloc(16), 32, SCRYPT);
    return false;
  }
  const expected = Buffer.from(keyB64, 'base64url');
  const key = await scryptAsync(password, Buffer.from(saltB64, 'base64url'), expected.length, SCRYPT);
  return timingSafeEqual(key, expected);
}
