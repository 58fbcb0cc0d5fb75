import crypto from 'node:crypto';
import { int8Array } from '../db/binary-arrays.js';
import type { Tx } from '../db/pool.js';

/**
 * Recognising a redelivered reader message (docs/ingest.md, "Redeliveries"). MQTT delivers
 * at least once, so the same message may come twice: after a crash between commit and
 * PUBACK, after a reconnect, or from another member of a shared subscription.
 *
 * Which messages are claimed (the rule) is IngestService's (carriesReaderTimes); this is
 * the storage of the claims, set-based so that one transaction may claim many messages.
 */

/** Bytes of a digest: the claims of a batch travel as one bytea of DIGEST_BYTES each. */
const DIGEST_BYTES = 16;

/** The first 16 bytes of the SHA-256 of the payload's bytes as received. */
export function payloadDigest(payload: Buffer | string): Buffer {
  // The one-shot hash (Node 20.12+) builds no Hash object per message.
  const full =
    typeof crypto.hash === 'function'
      ? (crypto.hash('sha256', payload, 'buffer') as unknown as Buffer)
      : crypto.createHash('sha256').update(payload).digest();
  return full.subarray(0, DIGEST_BYTES);
}

export interface DigestClaim {
  readerId: number;
  digest: Buffer;
  receivedAt: number;
}

/**
 * Claims the digests of messages about to be stored, in the transaction that stores them;
 * for each claim, true when it is the first (store the message) and false when the
 * digest was already claimed (a redelivery: skip it). Works for one message or a batch:
 * a digest twice in `claims` is claimed by its first occurrence. Rows are inserted in key
 * order, so two transactions claiming overlapping batches wait on each other instead of
 * deadlocking; a claim that meets another transaction's uncommitted row waits for it and
 * is refused once that one commits (or succeeds if it rolls back).
 */
export async function claimDigests(
  tx: Tx,
  orgId: number,
  claims: readonly DigestClaim[],
): Promise<boolean[]> {
  if (claims.length === 0) return [];
  for (const c of claims) {
    if (c.digest.byteLength !== DIGEST_BYTES) throw new Error(`a digest is ${DIGEST_BYTES} bytes`);
  }
  // The digests go as one binary parameter (no bytea[] literal of hex text), and the answer
  // is one row: how many were claimed, and only when some were not, which ones were (with
  // one read per message, a row per claim to parse was a good part of the claim's cost).
  const { rows } = await tx.query<{ claimed: number; keys: string | null }>(
    `WITH ins AS (
       INSERT INTO message_digests (reader_id, digest, org_id, seen_at)
       SELECT c.r, substring($3::bytea FROM (c.i::int - 1) * ${DIGEST_BYTES} + 1 FOR ${DIGEST_BYTES}), $1,
         timestamptz 'epoch' + c.ms * interval '1 millisecond'
       FROM unnest($2::bigint[], $4::bigint[]) WITH ORDINALITY AS c(r, ms, i)
       ORDER BY 1, 2
       ON CONFLICT DO NOTHING
       RETURNING reader_id, digest)
     SELECT count(*)::int AS claimed,
       CASE WHEN count(*) < $5 THEN string_agg(reader_id || ':' || encode(digest, 'hex'), ',') END AS keys
     FROM ins`,
    [
      orgId,
      int8Array(claims.map((c) => c.readerId)),
      Buffer.concat(claims.map((c) => c.digest)),
      int8Array(claims.map((c) => Math.floor(c.receivedAt))),
      claims.length,
    ],
  );
  const { claimed: count, keys } = rows[0]!;
  if (count === claims.length) return claims.map(() => true);
  const claimed = new Set(keys ? keys.split(',') : []);
  return claims.map((c) => claimed.delete(`${c.readerId}:${c.digest.toString('hex')}`));
}

/**
 * Deletes up to `limit` digests first seen before `cutoff`, across organizations (a system
 * transaction); returns how many. Callers repeat it while it returns `limit`, so that a
 * large backlog goes in short transactions well inside the statement timeout.
 */
export async function deleteExpiredDigests(tx: Tx, cutoff: number, limit: number): Promise<number> {
  const { rowCount } = await tx.query(
    `DELETE FROM message_digests WHERE ctid = ANY (ARRAY(
       SELECT ctid FROM message_digests WHERE seen_at < $1 LIMIT $2))`,
    [new Date(cutoff), limit],
  );
  return rowCount ?? 0;
}
