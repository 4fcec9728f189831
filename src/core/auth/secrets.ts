import { hash, randomBytes, randomInt, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;
/** scrypt's parameters for every password this server stores: a hash in the plain `scrypt$salt$key` form used these. */
const SCRYPT = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
/**
 * The N new hashes use. Only the test suite lowers it (test/setup/per-file.ts: ~40 ms of CPU per
 * hash, thousands of people made), and a lower N is written into the hash (`scrypt:N$salt$key`),
 * so whatever process reads the hash checks it with the N it was made with.
 */
let hashN = SCRYPT.N;

/** Tests only: the N of the hashes made from now on (the production N when left alone); returns the one before. */
export function setPasswordHashCost(n: number): number {
  if (!Number.isInteger(Math.log2(n)) || n < 2 || n > SCRYPT.N) throw new Error(`scrypt N must be a power of two up to ${SCRYPT.N}`);
  const before = hashN;
  hashN = n;
  return before;
}

/** The N a stored hash's scheme names: `scrypt` is the production N, `scrypt:N` a lower one; null when not ours. */
function schemeN(scheme: string): number | null {
  if (scheme === 'scrypt') return SCRYPT.N;
  const m = /^scrypt:(\d{1,5})$/.exec(scheme);
  const n = m ? Number(m[1]) : NaN;
  return Number.isInteger(Math.log2(n)) && n >= 2 && n < SCRYPT.N ? n : null;
}
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
  const key = await scryptAsync(password, salt, 32, { ...SCRYPT, N: hashN });
  const scheme = hashN === SCRYPT.N ? 'scrypt' : `scrypt:${hashN}`;
  return `${scheme}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const [scheme, saltB64, keyB64] = (stored ?? '').split('$');
  const n = schemeN(scheme ?? '');
  if (n === null || !saltB64 || !keyB64) {
    // Spend the same time as a real check so unknown emails are not distinguishable.
    await scryptAsync(password, Buffer.alloc(16), 32, { ...SCRYPT, N: hashN });
    return false;
  }
  const expected = Buffer.from(keyB64, 'base64url');
  const key = await scryptAsync(password, Buffer.from(saltB64, 'base64url'), expected.length, { ...SCRYPT, N: n });
  return timingSafeEqual(key, expected);
}
