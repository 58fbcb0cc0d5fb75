import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { Database } from '../db/pool.js';
import { signingKeyContext } from '../secrets/contexts.js';
import { SecretBox } from '../secrets/secret-box.js';

export const SIGNING_ALGORITHM = 'EdDSA';

type KeyLike = Awaited<ReturnType<typeof importJWK>>;

export interface SigningKey {
  kid: string;
  privateKey: KeyLike;
  publicKey: KeyLike;
  /** The private scalar, from which keys of other purposes are derived (CSRF tokens). */
  secret: Buffer;
}

/**
 * Loads the deployment's Ed25519 signing key, generating it on first start. Concurrent
 * first starts race on the insert; the loser reads the winner's key. The private key is
 * stored sealed (SecretBox): a JSON string once sealed, the JWK object as given otherwise.
 */
export async function loadSigningKey(db: Database, secrets: SecretBox): Promise<SigningKey> {
  const read = () =>
    db.pool.query<{ id: string; private_jwk: JWK | string; public_jwk: JWK }>(
      'SELECT id, private_jwk, public_jwk FROM signing_keys ORDER BY created_at, id LIMIT 1',
    );
  let { rows } = await read();
  if (rows.length === 0) {
    const pair = await generateKeyPair(SIGNING_ALGORITHM, { crv: 'Ed25519', extractable: true });
    const id = randomUUID();
    const privateJwk = JSON.stringify(await exportJWK(pair.privateKey));
    const stored = secrets.seal(privateJwk, signingKeyContext(id));
    await db.pool.query(
      `INSERT INTO signing_keys (id, algorithm, private_jwk, public_jwk)
       SELECT $1, $2, $3::jsonb, $4 WHERE NOT EXISTS (SELECT 1 FROM signing_keys)`,
      [
        id,
        SIGNING_ALGORITHM,
        SecretBox.isSealed(stored) ? JSON.stringify(stored) : privateJwk,
        await exportJWK(pair.publicKey),
      ],
    );
    ({ rows } = await read());
  }
  const row = rows[0];
  if (!row) throw new Error('no signing key could be stored');
  const privateJwk: JWK =
    typeof row.private_jwk === 'string'
      ? JSON.parse(secrets.open(row.private_jwk, signingKeyContext(row.id)))
      : row.private_jwk;
  if (typeof privateJwk.d !== 'string') throw new Error('the signing key has no private part');
  return {
    kid: row.id,
    privateKey: await importJWK(privateJwk, SIGNING_ALGORITHM),
    publicKey: await importJWK(row.public_jwk, SIGNING_ALGORITHM),
    secret: Buffer.from(privateJwk.d, 'base64url'),
  };
}
