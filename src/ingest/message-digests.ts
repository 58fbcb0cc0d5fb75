import crypto from 'node:crypto';
import { int8Array } from '../db/binary-arrays.js';
import type { Tx } from '../db/pool.js';
import type { Read } from './adapters/types.js';

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
  const out = Buffer.allocUnsafe(DIGEST_BYTES);
  if (typeof crypto.hash === 'function') {
    // The one-shot hash (Node 20.12+) builds no Hash object per message, and as a string it
    // allocates no ArrayBuffer of its own either: the digest is a view on Buffer's shared
    // pool, where a buffer of its own per waiting message was one more external allocation
    // for the collector to track.
    out.write(crypto.hash('sha256', payload, 'binary'), 0, DIGEST_BYTES, 'latin1');
  } else {
    crypto.createHash('sha256').update(payload).digest().copy(out, 0, 0, DIGEST_BYTES);
  }
  return out;
}

/**
 * What identifies a timed message: its digest and the earliest reader time among its reads,
 * both functions of the payload's bytes, so a redelivery has the same key. The time leads
 * the claims' key (migration 0057), so claims go to the right edge of the index.
 */
export interface MessageKey {
  digest: Buffer;
  /** Milliseconds since the epoch. */
  firstReadAt: number;
}

/** The key of a payload whose reads all carry reader times (at least one read). */
export function messageKey(payload: Buffer | string, reads: readonly Pick<Read, 'readerTime'>[]): MessageKey {
  let firstReadAt = Number.POSITIVE_INFINITY;
  for (const r of reads) {
    if (r.readerTime === null) throw new Error('a keyed message has reader times on all its reads');
    if (r.readerTime < firstReadAt) firstReadAt = r.readerTime;
  }
  if (reads.length === 0) throw new Error('a keyed message has reads');
  return { digest: payloadDigest(payload), firstReadAt };
}

export interface DigestClaim extends MessageKey {
  readerId: number;
  receivedAt: number;
}

/**
 * The claims made before migration 0057, kept in message_digests_legacy until they expire:
 * only a message whose earliest reader time is at or before `until` (the last legacy
 * receipt plus the future skew bound) can have one. Null when there are none.
 */
export interface LegacyClaims {
  until: number | null;
}

/** The legacy claims' bound (loadLegacyClaims): none, as in a database created after 0057. */
export const NO_LEGACY_CLAIMS: LegacyClaims = { until: null };

/**
 * Reads the legacy claims' bound once: nothing adds to message_digests_legacy after the
 * migration, so it never moves.
 */
export async function loadLegacyClaims(tx: Tx, maxFutureSkewMs: number): Promise<LegacyClaims> {
  const { rows } = await tx.query<{ last: string | null }>(
    'SELECT (extract(epoch FROM last_seen_at) * 1000)::bigint::text AS last FROM message_digests_legacy_bound',
  );
  const last = rows[0]?.last;
  return { until: last == null ? null : Number(last) + maxFutureSkewMs };
}

/**
 * Claims the digests of messages about to be stored, in the transaction that stores them;
 * for each claim, true when it is the first (store the message) and false when the
 * digest was already claimed (a redelivery: skip it). Works for one message or a batch:
 * a digest twice in `claims` is claimed by its first occurrence. Rows are inserted in key
 * order, so two transactions claiming overlapping batches wait on each other instead of
 * deadlocking; a claim that meets another transaction's uncommitted row waits for it and
 * is refused once that one commits (or succeeds if it rolls back). A message that has a
 * legacy claim (LegacyClaims) is refused too.
 */
export async function claimDigests(
  tx: Tx,
  orgId: number,
  claims: readonly DigestClaim[],
  legacy: LegacyClaims = NO_LEGACY_CLAIMS,
): Promise<boolean[]> {
  if (claims.length === 0) return [];
  for (const c of claims) {
    if (c.digest.byteLength !== DIGEST_BYTES) throw new Error(`a digest is ${DIGEST_BYTES} bytes`);
  }
  const values: unknown[] = [
    orgId,
    int8Array(claims.map((c) => c.readerId)),
    Buffer.concat(claims.map((c) => c.digest)),
    int8Array(claims.map((c) => Math.floor(c.receivedAt))),
    int8Array(claims.map((c) => Math.floor(c.firstReadAt))),
  ];
  // A message read after the last legacy receipt could have no legacy claim: no look-up.
  let unclaimedBefore = '';
  if (legacy.until !== null && claims.some((c) => c.firstReadAt <= legacy.until!)) {
    values.push(legacy.until);
    unclaimedBefore = `WHERE c.f > $6 OR NOT EXISTS (
         SELECT 1 FROM message_digests_legacy l WHERE l.reader_id = c.r AND l.digest = x.d)`;
  }
  // The digests go as one binary parameter (no bytea[] literal of hex text). The insert
  // returns nothing: its row count tells whether every claim was made, as nearly always;
  // returning the claims and counting them took a fifth of the statement's time
  // (docs/ingest-history.md, "The digest claim without RETURNING").
  const inserted = await tx.query(
    `INSERT INTO message_digests (reader_id, first_read_at, digest, org_id, seen_at)
     SELECT c.r, ${EPOCH_MS('c.f')}, x.d, $1, ${EPOCH_MS('c.ms')}
     FROM ${CLAIMS} ${unclaimedBefore}
     ORDER BY 1, 2, 3
     ON CONFLICT DO NOTHING`,
    values,
  );
  if (inserted.rowCount === claims.length) return claims.map(() => true);
  // Some were not made: which ones this transaction made, by their rows' transaction id
  // (no savepoint comes between the insert and this look-up, so it is the transaction's own).
  const { rows } = await tx.query<{ keys: string | null }>(
    `SELECT string_agg(concat_ws(':', m.reader_id, c.f, encode(m.digest, 'hex')), ',') AS keys
     FROM ${CLAIMS}
     JOIN message_digests m ON m.reader_id = c.r AND m.first_read_at = ${EPOCH_MS('c.f')} AND m.digest = x.d
     WHERE m.org_id = $1 AND m.xmin = pg_current_xact_id_if_assigned()::xid`,
    values.slice(0, 5),
  );
  const claimed = new Set(rows[0]?.keys ? rows[0].keys.split(',') : []);
  // A digest twice in the batch: its first occurrence made the claim.
  return claims.map((c) =>
    claimed.delete(`${c.readerId}:${Math.floor(c.firstReadAt)}:${c.digest.toString('hex')}`),
  );
}

/** The claims of claimDigests' parameters, a row each: reader, receipt, first read, digest. */
const CLAIMS = `unnest($2::bigint[], $4::bigint[], $5::bigint[]) WITH ORDINALITY AS c(r, ms, f, i)
       CROSS JOIN LATERAL (SELECT substring($3::bytea FROM (c.i::int - 1) * ${DIGEST_BYTES} + 1 FOR ${DIGEST_BYTES}) AS d) x`;

/** An instant given in milliseconds since the epoch. */
const EPOCH_MS = (ms: string) => `timestamptz 'epoch' + ${ms} * interval '1 millisecond'`;

/**
 * Deletes up to `limit` digests first seen before `cutoff`, across organizations (a system
 * transaction), the legacy claims (migration 0057) first; returns how many. Callers repeat
 * it while it returns `limit`, so that a large backlog goes in short transactions well
 * inside the statement timeout.
 */
export async function deleteExpiredDigests(tx: Tx, cutoff: number, limit: number): Promise<number> {
  let deleted = 0;
  for (const table of ['message_digests_legacy', 'message_digests']) {
    const { rowCount } = await tx.query(
      `DELETE FROM ${table} WHERE ctid = ANY (ARRAY(
         SELECT ctid FROM ${table} WHERE seen_at < $1 LIMIT $2))`,
      [new Date(cutoff), limit - deleted],
    );
    deleted += rowCount ?? 0;
    if (deleted >= limit) break;
  }
  return deleted;
}
