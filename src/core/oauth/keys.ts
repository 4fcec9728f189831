import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Db } from '../../db/connect.ts';
import { sha256 } from '../auth/secrets.ts';

/**
 * The authorization server's own keys: the key that signs its short-lived cookies (the
 * interaction between the authorization request and the consent page) and a signing key set it
 * requires (this server issues opaque tokens and no ID tokens, so nothing is signed with it in
 * practice). Made once and kept in the database, so every web process signs and checks alike
 * with no setting to keep in step.
 */
export interface ServerKeys {
  cookieKeys: string[];
  jwks: { keys: Record<string, unknown>[] };
}

const ROW = sha256('server-keys');

export async function serverKeys(sql: Db): Promise<ServerKeys> {
  const [found] = await sql<{ payload: ServerKeys }[]>`select payload from oauth_records where model = 'ServerKeys' and id_hash = ${ROW}`;
  if (found) return found.payload;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const made: ServerKeys = {
    cookieKeys: [randomBytes(32).toString('base64url')],
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), use: 'sig', alg: 'RS256', kid: randomBytes(8).toString('hex') }] },
  };
  // two processes starting together: the first insert wins and both use it
  await sql`insert into oauth_records (model, id_hash, payload) values ('ServerKeys', ${ROW}, ${sql.json(made as never)}) on conflict do nothing`;
  const [kept] = await sql<{ payload: ServerKeys }[]>`select payload from oauth_records where model = 'ServerKeys' and id_hash = ${ROW}`;
  return kept!.payload;
}
