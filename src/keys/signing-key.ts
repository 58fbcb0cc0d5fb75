import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { Database } from '../db/pool.js';

export const SIGNING_ALGORITHM = 'EdDSA';

type KeyLike = Awaited<ReturnType<typeof importJWK>>;

export interface SigningKey {
  kid: string;
  privateKey: KeyLike;
  publicKey: KeyLike;
}

/**
 * Loads the deployment's Ed25519 signing key, generating it on first start. Concurrent
 * first starts race on the insert; the loser reads the winner's key.
 */
export async function loadSigningKey(db: Database): Promise<SigningKey> {
  const read = () =>
    db.pool.query<{ id: string; private_jwk: JWK; public_jwk: JWK }>(
      'SELECT id, private_jwk, public_jwk FROM signing_keys ORDER BY created_at, id LIMIT 1',
    );
  let { rows } = await read();
  if (rows.length === 0) {
    const pair = await generateKeyPair(SIGNING_ALGORITHM, { crv: 'Ed25519', extractable: true });
    await db.pool.query(
      `INSERT INTO signing_keys (id, algorithm, private_jwk, public_jwk)
       SELECT $1, $2, $3, $4 WHERE NOT EXISTS (SELECT 1 FROM signing_keys)`,
      [randomUUID(), SIGNING_ALGORITHM, await exportJWK(pair.privateKey), await exportJWK(pair.publicKey)],
    );
    ({ rows } = await read());
  }
  const row = rows[0];
  if (!row) throw new Error('no signing key could be stored');
  return {
    kid: row.id,
    privateKey: await importJWK(row.private_jwk, SIGNING_ALGORITHM),
    publicKey: await importJWK(row.public_jwk, SIGNING_ALGORITHM),
  };
}
