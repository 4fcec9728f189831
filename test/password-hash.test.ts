import { randomBytes, scryptSync } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashPassword, setPasswordHashCost, verifyPassword } from '../src/core/auth/secrets.ts';

/**
 * The suite hashes the passwords it makes at a lower scrypt cost (test/setup/per-file.ts): these
 * tests hold the production parameters, and show a cheaper hash is checked with its own N.
 */
const PRODUCTION = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
let before = 0;
beforeEach(() => {
  before = setPasswordHashCost(PRODUCTION.N);
});
afterEach(() => {
  setPasswordHashCost(before);
});

describe('password hashes', () => {
  it('are scrypt N=16384, r=8, p=1, 32 bytes, salted with 16 random bytes, in the `scrypt$salt$key` form', async () => {
    const stored = await hashPassword('correct horse battery');
    const [scheme, salt, key] = stored.split('$');
    expect(scheme).toBe('scrypt');
    expect(Buffer.from(salt!, 'base64url')).toHaveLength(16);
    expect(Buffer.from(key!, 'base64url').equals(scryptSync('correct horse battery', Buffer.from(salt!, 'base64url'), 32, PRODUCTION))).toBe(true);
    expect(await hashPassword('correct horse battery')).not.toBe(stored);
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
    expect(await verifyPassword('correct horse batterY', stored)).toBe(false);
  });

  it('checks a hash that names a lower N with that N, whatever the cost new hashes use', async () => {
    setPasswordHashCost(1024);
    const cheap = await hashPassword('a passphrase');
    const [scheme, salt, key] = cheap.split('$');
    expect(scheme).toBe('scrypt:1024');
    expect(Buffer.from(key!, 'base64url').equals(scryptSync('a passphrase', Buffer.from(salt!, 'base64url'), 32, { ...PRODUCTION, N: 1024 }))).toBe(true);
    setPasswordHashCost(PRODUCTION.N);
    expect(await verifyPassword('a passphrase', cheap)).toBe(true);
    expect(await verifyPassword('another passphrase', cheap)).toBe(false);
  });

  it('refuses a stored value that is not one of ours, and a cost that is not a power of two up to the production N', async () => {
    const salt = randomBytes(16).toString('base64url');
    const key = (n: number) => scryptSync('pw-secret', Buffer.from(salt, 'base64url'), 32, { ...PRODUCTION, N: n }).toString('base64url');
    for (const stored of [
      null,
      '',
      'bcrypt$x$y',
      `scrypt:16384$${salt}$${key(16384)}`,
      `scrypt:32768$${salt}$${key(2)}`,
      `scrypt:1$${salt}$${key(2)}`,
      `scrypt:0x10$${salt}$${key(16)}`,
      `scrypt$${salt}$`,
    ]) {
      expect(await verifyPassword('pw-secret', stored), String(stored)).toBe(false);
    }
    expect(await verifyPassword('pw-secret', `scrypt:16$${salt}$${key(16)}`)).toBe(true);
    for (const n of [0, 1, 1000, 32768, 1.5]) expect(() => setPasswordHashCost(n), String(n)).toThrow();
  });
});
