import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config.ts';
import { AppError } from '../errors.ts';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals short secrets (a mailbox password) with AES-256-GCM for storage: version byte, random
 * IV, tag, ciphertext. `context` is authenticated with it (the workspace), so a sealed value
 * copied to another row does not open there.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('an AES-256 key is 32 bytes');
    this.#key = key;
  }

  seal(plain: string, context: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
  }

  /** Throws when the value was sealed with another key or context, or was altered. */
  open(sealed: Uint8Array, context: string): string {
    const buf = Buffer.from(sealed);
    if (buf[0] !== VERSION || buf.length < 1 + IV_BYTES + TAG_BYTES) throw new Error('not a sealed secret of this version');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, buf.subarray(1, 1 + IV_BYTES));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(buf.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(buf.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}

/** WT_SECRET_KEY: 64 hex digits, or the base64 of 32 bytes. */
export const SECRET_KEY_PATTERN = /^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/;

function parseKey(raw: string): Buffer {
  const value = raw.trim();
  if (!SECRET_KEY_PATTERN.test(value)) throw new Error('a secret key is 64 hex digits or the base64 of 32 bytes');
  return Buffer.from(value, value.length === 64 ? 'hex' : 'base64');
}

/** Where the embedded default keeps its key (`wt embedded-env` prints it for a move to DATABASE_URL). */
export const embeddedKeyFile = (dataDir: string) => path.join(dataDir, 'secret.key');

/**
 * The key file of the embedded default, created once (exclusively, so two processes starting
 * together end up with the same key) and read ever after. Losing it loses the stored passwords.
 */
function keyFromDataDir(dataDir: string): Buffer {
  const file = embeddedKeyFile(dataDir);
  mkdirSync(dataDir, { recursive: true });
  try {
    writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return parseKey(readFileSync(file, 'utf8'));
}

const boxes = new Map<string, SecretBox>();

/**
 * The process's SecretBox: WT_SECRET_KEY when set; on the embedded default (no DATABASE_URL) a
 * key generated once under DATA_DIR; otherwise null, since processes sharing an external database
 * may run on other machines and would each generate a key of their own.
 */
export function loadSecretBox(config: Pick<Config, 'WT_SECRET_KEY' | 'DATABASE_URL' | 'DATA_DIR'>): SecretBox | null {
  const source = config.WT_SECRET_KEY ? `env:${config.WT_SECRET_KEY}` : config.DATABASE_URL ? null : `dir:${path.resolve(config.DATA_DIR)}`;
  if (!source) return null;
  let box = boxes.get(source);
  if (!box) {
    box = new SecretBox(config.WT_SECRET_KEY ? parseKey(config.WT_SECRET_KEY) : keyFromDataDir(config.DATA_DIR));
    boxes.set(source, box);
  }
  return box;
}

/** 503: the process has no key to seal or open stored secrets with. */
export const secretKeyMissing = () =>
  new AppError('unavailable', 'Set WT_SECRET_KEY (64 hex digits) to store mailbox passwords with an external database.', {
    reason: 'secret_key_missing',
  });
