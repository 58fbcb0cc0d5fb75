/**
 * Migration 0057 on a database that already holds digest claims: they are kept (as legacy
 * claims, keyed as before) until they expire, so a message stored before the upgrade and
 * delivered again after it is still refused, while claims made after it are keyed by the
 * message's earliest reader time.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_CLOCK_POLICY } from '../../src/ingest/clock-policy.js';
import {
  claimDigests,
  deleteExpiredDigests,
  loadLegacyClaims,
  NO_LEGACY_CLAIMS,
  payloadDigest,
} from '../../src/ingest/message-digests.js';
import { createTestDatabase, migrateAround, type TestDatabase } from '../helpers/database.js';

describe('migration 0057 (digest claims by first read) on existing claims', () => {
  let database: TestDatabase | undefined;
  afterAll(async () => {
    await database?.drop();
  });

  it('keeps the claims made before it, refuses their redeliveries, and lets them expire', async () => {
    database = await createTestDatabase({ migrate: false });
    const { db } = database;
    let orgId = 0;
    const reader = 41;
    const hour = 3_600_000;
    const now = Date.now();
    const old = payloadDigest('stored before the upgrade');
    const older = payloadDigest('stored a week ago');
    await migrateAround(db.pool, '0057', async () => {
      orgId = Number(
        (
          await db.pool.query<{ id: string }>(
            `INSERT INTO organizations (name) VALUES ('Upgrade') RETURNING id`,
          )
        ).rows[0]!.id,
      );
      // Claims as 0025 keyed them: the reader and the digest, received at seen_at.
      await db.pool.query(
        `INSERT INTO message_digests (reader_id, digest, org_id, seen_at) VALUES ($1, $2, $4, $5), ($1, $3, $4, $6)`,
        [reader, old, older, orgId, new Date(now - hour), new Date(now - 8 * 24 * hour)],
      );
    });

    const legacy = await db.system((tx) => loadLegacyClaims(tx, DEFAULT_CLOCK_POLICY.maxFutureSkewMs));
    expect(legacy.until).toBe(now - hour + DEFAULT_CLOCK_POLICY.maxFutureSkewMs);

    const claim = (digest: Buffer, firstReadAt: number, given = legacy) =>
      db.withOrg(orgId, (tx) =>
        claimDigests(tx, orgId, [{ readerId: reader, digest, firstReadAt, receivedAt: Date.now() }], given),
      );
    // Read before the last legacy receipt: a legacy claim, a redelivery.
    expect(await claim(old, now - hour - 1000)).toEqual([false]);
    // Without the legacy claims it would have been taken: the refusal above is theirs.
    expect(await claim(old, now - hour - 2000, NO_LEGACY_CLAIMS)).toEqual([true]);
    // Read after any legacy claim could have been: no look-up, and the message is new.
    expect(await claim(old, now - hour + DEFAULT_CLOCK_POLICY.maxFutureSkewMs + 1)).toEqual([true]);
    // Another payload is claimed, once.
    const fresh = payloadDigest('stored after the upgrade');
    expect(await claim(fresh, now - 1000)).toEqual([true]);
    expect(await claim(fresh, now - 1000)).toEqual([false]);

    // Nothing adds legacy claims any more (the bound holds only while that is so).
    await expect(
      db.withOrg(orgId, (tx) =>
        tx.query(
          `INSERT INTO message_digests_legacy (reader_id, digest, org_id, seen_at) VALUES (1, $1, $2, now())`,
          [fresh, orgId],
        ),
      ),
    ).rejects.toThrow(/permission denied/);

    // The week-old legacy claim expires; the hour-old one is kept.
    const window = 7 * 24 * hour;
    expect(await db.system((tx) => deleteExpiredDigests(tx, now - window, 100))).toBe(1);
    const left = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM message_digests_legacy');
    expect(left.rows[0]!.n).toBe(1);
  });

  it('leaves a database created after it with no legacy claims to look up', async () => {
    const fresh = await createTestDatabase();
    try {
      const legacy = await fresh.db.system((tx) =>
        loadLegacyClaims(tx, DEFAULT_CLOCK_POLICY.maxFutureSkewMs),
      );
      expect(legacy).toEqual(NO_LEGACY_CLAIMS);
    } finally {
      await fresh.drop();
    }
  });
});
