import { createHash } from 'node:crypto';
import type { Tx } from '../db/pool.js';

/**
 * Recognising a redelivered reader message (docs/ingest.md, "Redeliveries"). MQTT delivers
 * at least once, so the same message may come twice: after a crash between commit and
 * PUBACK, after a reconnect, or from another member of a shared subscription.
 *
 * Which messages are claimed (the rule) is IngestService's (carriesReaderTimes); this is
 * the storage of the claims, set-based so that one transaction may claim many messages.
 */

/** The first 16 bytes of the SHA-256 of the payload's bytes as received. */
export function payloadDigest(payload: Buffer | string): Buffer {
  return createHash('sha256').update(payload).digest().subarray(0, 16);
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
  const { rows } = await tx.query<{ reader_id: number; digest: Buffer }>(
    `INSERT INTO message_digests (reader_id, digest, org_id, seen_at)
     SELECT r, d, $1, s FROM unnest($2::bigint[], $3::bytea[], $4::timestamptz[]) AS c(r, d, s)
     ORDER BY r, d
     ON CONFLICT DO NOTHING
     RETURNING reader_id, digest`,
    [
      orgId,
      claims.map((c) => c.readerId),
      claims.map((c) => c.digest),
      claims.map((c) => new Date(c.receivedAt)),
    ],
  );
  const claimed = new Set(rows.map((r) => `${r.reader_id}:${r.digest.toString('hex')}`));
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
