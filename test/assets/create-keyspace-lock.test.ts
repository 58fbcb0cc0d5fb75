/**
 * How much POST /api/v1/assets serialises the creates of one organization (issue 11): the
 * keyspace lock (src/master-data/auto-key.ts) is taken only where an auto key could be
 * involved, and a create without a key takes it only to choose the slot and commit (and
 * releases it before the commit's WAL flush: test/master-data/keyspace-flush.test.ts).
 */
import { describe, expect, it } from 'vitest';
import type { Asset } from '../../src/assets/schemas.js';
import { keylessCreatesInFlight } from '../../src/assets/service.js';
import { KEYSPACE_LOCK_CLASS } from '../../src/master-data/auto-key.js';
import { assetApi, lockingAssetsFixture, unique } from './helpers.js';

const ASSETS_LOCK_CLASS = KEYSPACE_LOCK_CLASS.assets;

describe('POST /api/v1/assets and the keyspace lock', { timeout: 90_000 }, () => {
  const w = lockingAssetsFixture();

  /** Backends of this database waiting for an advisory lock. */
  async function waitingForLock(): Promise<number> {
    const { rows } = await w.holder.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
       WHERE l.locktype = 'advisory' AND NOT l.granted AND a.datname = current_database()`,
    );
    return rows[0]!.n;
  }

  it('a create with a key not of the ASSET-NNNN form never waits for the lock', async () => {
    await w.holder.query('SELECT pg_advisory_lock($1, $2)', [ASSETS_LOCK_CLASS, w.org.id]);
    try {
      // Would wait until the lock is released (and time out) if it took the lock.
      const created = await w.api.create({
        external_key: unique('FL'),
        tags: [{ tag_type: 'rfid', value: unique('E') }],
      });
      expect(created.external_key).toMatch(/^FL-/);
    } finally {
      await w.holder.query('SELECT pg_advisory_unlock($1, $2)', [ASSETS_LOCK_CLASS, w.org.id]);
    }
  });

  it('a create without a key waits only to choose its slot, after its row and tags are in', async () => {
    await w.holder.query('SELECT pg_advisory_lock($1, $2)', [ASSETS_LOCK_CLASS, w.org.id]);
    let pending: Promise<Asset> | undefined;
    try {
      const tag = unique('E');
      pending = w.api.create({ name: 'Waiting', tags: [{ tag_type: 'rfid', value: tag }] });
      const deadline = Date.now() + 30_000;
      while ((await waitingForLock()) === 0) {
        if (Date.now() > deadline) throw new Error('the create never waited for the keyspace lock');
        await new Promise((r) => setTimeout(r, 20));
      }
      // While it waits, its tag is already claimed by its (uncommitted) row: a create with a
      // key of another form and another tag goes through meanwhile.
      const other = await w.api.create({
        external_key: unique('FL'),
        tags: [{ tag_type: 'rfid', value: unique('E') }],
      });
      expect(other.external_key).toMatch(/^FL-/);
    } finally {
      await w.holder.query('SELECT pg_advisory_unlock($1, $2)', [ASSETS_LOCK_CLASS, w.org.id]);
    }
    const created = await pending;
    expect(created.external_key).toBe('ASSET-0001');
    const res = await w.api.get(`/api/v1/assets/${created.id}`);
    expect(res.json().data).toEqual(created);
  });

  it('keyless creates past the few in flight wait without a connection, then all get their slots', async () => {
    const other = await w.t.createOrg();
    const otherApi = assetApi(w.t, (await other.key()).token);
    const inFlight = keylessCreatesInFlight(w.t.database.db.appPool.options.max ?? 10);
    // Fewer than the pool: the creates with keys below still find a connection.
    expect(inFlight).toBeLessThan(w.t.database.db.appPool.options.max ?? 10);
    const count = inFlight + 3;
    await w.holder.query('SELECT pg_advisory_lock($1, $2)', [ASSETS_LOCK_CLASS, other.id]);
    let pending: Promise<Asset[]> | undefined;
    try {
      pending = Promise.all(Array.from({ length: count }, () => otherApi.create({ name: 'Queued' })));
      const deadline = Date.now() + 30_000;
      while ((await waitingForLock()) < inFlight) {
        if (Date.now() > deadline) throw new Error('the creates never waited for the keyspace lock');
        await new Promise((r) => setTimeout(r, 20));
      }
      // The rest were sent at the same time: had they a connection, they would be waiting too.
      for (let i = 0; i < 5; i++) {
        await otherApi.create({ external_key: unique('FL') });
        expect(await waitingForLock()).toBe(inFlight);
      }
    } finally {
      await w.holder.query('SELECT pg_advisory_unlock($1, $2)', [ASSETS_LOCK_CLASS, other.id]);
    }
    const keys = (await pending).map((a) => a.external_key).sort();
    expect(keys).toEqual(Array.from({ length: count }, (_, i) => `ASSET-${String(i + 1).padStart(4, '0')}`));
  });

  it('a create with a key of the ASSET-NNNN form still serialises with keyless creates', async () => {
    await w.holder.query('SELECT pg_advisory_lock($1, $2)', [ASSETS_LOCK_CLASS, w.org.id]);
    let pending: Promise<Asset> | undefined;
    try {
      pending = w.api.create({ external_key: 'ASSET-0002' });
      const deadline = Date.now() + 30_000;
      while ((await waitingForLock()) === 0) {
        if (Date.now() > deadline) throw new Error('the create never waited for the keyspace lock');
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      await w.holder.query('SELECT pg_advisory_unlock($1, $2)', [ASSETS_LOCK_CLASS, w.org.id]);
    }
    expect((await pending).external_key).toBe('ASSET-0002');
    expect((await w.api.create()).external_key).toBe('ASSET-0003');
  });
});
