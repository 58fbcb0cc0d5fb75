/**
 * DELETE /api/v1/assets/{id} and the keyspace lock. Freeing an auto key's slot takes the
 * organization's keyspace lock (migration 0009's trigger); taken there, after the delete's
 * row lock, it deadlocked with a create or rename that held the lock and waited for that row
 * (a stress run of 24 clients: 6 of 4,000 requests answered 500). The delete now takes it
 * first, in the lock order (keyspace, rows). And a transaction the server still aborts to
 * break a deadlock is run again (src/db/transaction.ts), so the request is answered as if
 * it had run alone.
 */
import { describe, expect, it } from 'vitest';
import { KEYSPACE_LOCK_CLASS } from '../../src/master-data/auto-key.js';
import { untilSessions } from '../helpers/database.js';
import { lockingAssetsFixture } from './helpers.js';

const ASSETS_LOCK_CLASS = KEYSPACE_LOCK_CLASS.assets;

describe('DELETE /api/v1/assets/{id} and the keyspace lock', { timeout: 90_000 }, () => {
  const w = lockingAssetsFixture();

  const deadlocks = async () =>
    (
      await w.holder.query<{ n: number }>(
        'SELECT deadlocks::int AS n FROM pg_stat_database WHERE datname = current_database()',
      )
    ).rows[0]!.n;

  it('takes the keyspace lock before it locks the row of an auto-keyed asset', async () => {
    const doomed = await w.api.create();
    expect(doomed.external_key).toMatch(/^ASSET-\d{4}$/);
    await w.holder.query('BEGIN');
    try {
      await w.holder.query('SELECT pg_advisory_xact_lock($1, $2)', [ASSETS_LOCK_CLASS, w.org.id]);
      const pending = w.api.delete(`/api/v1/assets/${doomed.id}`);
      await untilSessions(w.t.database.db, "wait_event_type = 'Lock'", 'the delete waiting for the keyspace');
      // Waiting for the keyspace, it holds no lock on the row yet.
      await w.holder.query('SELECT 1 FROM assets WHERE id = $1 FOR UPDATE NOWAIT', [doomed.id]);
      await w.holder.query('ROLLBACK');
      expect((await pending).statusCode).toBe(204);
    } finally {
      await w.holder.query('ROLLBACK');
    }
  });

  it('a delete aborted to break a deadlock is run again, and answered 204', async () => {
    const doomed = await w.api.create();
    const before = await deadlocks();
    const retriedBefore = w.t.database.db.stats.transientConflictRetries;
    await w.holder.query('BEGIN');
    try {
      // The holder never checks for the deadlock, so the server aborts the delete's side.
      await w.holder.query("SET LOCAL deadlock_timeout = '60s'");
      await w.holder.query('SELECT 1 FROM assets WHERE id = $1 FOR UPDATE', [doomed.id]);
      const pending = w.api.delete(`/api/v1/assets/${doomed.id}`);
      // The delete holds the keyspace lock and waits for the row...
      await untilSessions(w.t.database.db, "wait_event_type = 'Lock'", 'the delete waiting for the row');
      // ...and the holder asks for the keyspace: a deadlock, which the delete's side breaks.
      await w.holder.query('SELECT pg_advisory_xact_lock($1, $2)', [ASSETS_LOCK_CLASS, w.org.id]);
      await w.holder.query('ROLLBACK');
      expect((await pending).statusCode).toBe(204);
    } finally {
      await w.holder.query('ROLLBACK');
    }
    expect(await deadlocks()).toBe(before + 1);
    // Counted where /metrics reads it (tagtrail_db_transaction_retries_total).
    expect(w.t.database.db.stats.transientConflictRetries).toBe(retriedBefore + 1);
    expect((await w.api.get(`/api/v1/assets/${doomed.id}`)).statusCode).toBe(404);
  });
});
